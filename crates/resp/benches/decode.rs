//! Decoder and encoder throughput on typical request shapes.
use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use quince_resp::{Decoded, Encoder, Protocol, RequestDecoder, DEFAULT_PROTO_MAX_BULK_LEN};

fn pipeline(n: usize) -> Vec<u8> {
    let mut v = Vec::new();
    for i in 0..n {
        let key = format!("key:{i:012}");
        v.extend_from_slice(format!("*3\r\n$3\r\nSET\r\n${}\r\n{}\r\n$3\r\nxxx\r\n", key.len(), key).as_bytes());
    }
    v
}

fn decode(c: &mut Criterion) {
    let input = pipeline(1000);
    let mut group = c.benchmark_group("decode");
    group.throughput(Throughput::Elements(1000));
    group.bench_function("set_pipeline_1000", |b| {
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        b.iter(|| {
            let mut pos = 0;
            let mut argc = 0;
            while let Ok(Decoded::Request { len }) = d.decode(&input[pos..]) {
                argc += d.args(&input[pos..]).len();
                pos += len;
            }
            black_box(argc)
        })
    });
    group.bench_function("inline_ping_1000", |b| {
        let input = b"PING\r\n".repeat(1000);
        let mut d = RequestDecoder::new(DEFAULT_PROTO_MAX_BULK_LEN);
        b.iter(|| {
            let mut pos = 0;
            while let Ok(Decoded::Request { len }) = d.decode(&input[pos..]) {
                pos += len;
            }
            black_box(pos)
        })
    });
    group.finish();
}

fn encode(c: &mut Criterion) {
    c.bench_function("encode/bulk_and_int_1000", |b| {
        let mut out = Vec::with_capacity(64 * 1024);
        b.iter(|| {
            out.clear();
            let mut e = Encoder::new(&mut out, Protocol::Resp2);
            for i in 0..500 {
                e.bulk(b"some-value");
                e.integer(i);
            }
            black_box(out.len())
        })
    });
}

criterion_group!(benches, decode, encode);
criterion_main!(benches);
