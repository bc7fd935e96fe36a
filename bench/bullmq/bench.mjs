// One BullMQ run against the server at PORT: enqueue JOBS no-op jobs with addBulk in
// batches of BATCH, then process them with one Worker at CONCURRENCY. Prints one JSON line:
// {"enqueue_jobs_per_s": ..., "process_jobs_per_s": ..., "completed": ...}.
// Usage: node bench.mjs PORT [JOBS] [BATCH] [CONCURRENCY]
import { Queue, Worker } from 'bullmq';

const port = Number(process.argv[2]);
const jobs = Number(process.argv[3] ?? 20000);
const batch = Number(process.argv[4] ?? 1000);
const concurrency = Number(process.argv[5] ?? 50);
const connection = { host: '127.0.0.1', port, maxRetriesPerRequest: null };
const name = `bench-${process.pid}-${Date.now()}`;

const queue = new Queue(name, { connection });
await queue.waitUntilReady();

let start = process.hrtime.bigint();
for (let done = 0; done < jobs; done += batch) {
  const n = Math.min(batch, jobs - done);
  await queue.addBulk(Array.from({ length: n }, (_, i) => ({ name: 'noop', data: { i: done + i } })));
}
const enqueueSeconds = Number(process.hrtime.bigint() - start) / 1e9;
const counts = await queue.getJobCounts('wait');
if (counts.wait !== jobs) throw new Error(`expected ${jobs} waiting jobs, found ${counts.wait}`);

let completed = 0;
let finish;
const allDone = new Promise((resolve) => { finish = resolve; });
start = process.hrtime.bigint();
const worker = new Worker(name, async () => {}, { connection, concurrency, autorun: false });
worker.on('completed', () => {
  completed += 1;
  if (completed === jobs) finish();
});
worker.on('failed', (_, err) => { throw err; });
worker.run();
await allDone;
const processSeconds = Number(process.hrtime.bigint() - start) / 1e9;
await worker.close();
const after = await queue.getJobCounts('completed', 'wait', 'active', 'failed');
await queue.obliterate({ force: true });
await queue.close();
if (after.completed !== jobs || after.wait || after.active || after.failed) {
  throw new Error(`unexpected final counts ${JSON.stringify(after)}`);
}
console.log(JSON.stringify({
  enqueue_jobs_per_s: Math.round(jobs / enqueueSeconds),
  process_jobs_per_s: Math.round(jobs / processSeconds),
  completed,
}));
