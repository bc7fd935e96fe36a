package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Registers: compare-and-set in one script, so it is atomic as Redis runs scripts.
var casScript = redis.NewScript(`
local cur = redis.call('GET', KEYS[1])
if (cur or '') == ARGV[1] then redis.call('SET', KEYS[1], ARGV[2]) return 1 end
return 0`)

// A list-append transaction as one script: ARGV[i] is the value to append to KEYS[i], or
// empty for a read of KEYS[i]; reads come back as lists, appends as nil.
var txnScript = redis.NewScript(`
local out = {}
for i = 1, #KEYS do
  if ARGV[i] == '' then out[i] = redis.call('LRANGE', KEYS[i], 0, -1)
  else redis.call('RPUSH', KEYS[i], ARGV[i]); out[i] = false end
end
return out`)

type workloadConfig struct {
	registers int // keys per workload
	counters  int
	groups    int // list-append groups alive at a time
	groupLife int // transactions after which a group is retired for a fresh one
}

// client is one connection (a go-redis client with a single connection and no retries:
// a retried write could take effect twice, and the history would not say so).
type client struct {
	id    int
	rdb   *redis.Client
	rng   *rand.Rand
	rec   *recorder
	cfg   workloadConfig
	ids   *atomic.Int64 // unique values for writes and appends
	txns  *atomic.Int64 // transactions started, which names the current groups
	known map[string]int
	net   clientNet
	addr  string // where rdb connects
}

// clientNet says where a client connects and how: the single server, or whichever node the
// sentinels name master now, through the network namespace of the replicated runs.
type clientNet struct {
	master  func() string
	dialer  func(ctx context.Context, network, addr string) (net.Conn, error)
	timeout time.Duration // per call
	wait    int           // > 0: a write counts as acknowledged once WAIT says this many replicas have it
}

func newClient(id int, rec *recorder, cfg workloadConfig, ids, txns *atomic.Int64, seed int64, n clientNet) *client {
	c := &client{id: id, rng: rand.New(rand.NewSource(seed)), rec: rec, cfg: cfg, ids: ids, txns: txns, known: map[string]int{}, net: n}
	c.reconnect()
	return c
}

// reconnect points the client at the current master (a no-op while it stays the same).
func (c *client) reconnect() {
	addr := c.net.master()
	if c.rdb != nil && addr == c.addr {
		return
	}
	if c.rdb != nil {
		c.rdb.Close()
	}
	c.addr = addr
	c.rdb = redis.NewClient(&redis.Options{
		Addr:     addr,
		Dialer:   c.net.dialer,
		PoolSize: 1,
		// No separate pool for pipelines: a MULTI/EXEC must run on the connection that
		// then sends WAIT (WAIT counts the replicas that have that connection's writes;
		// on another connection it waited for an older write and "acknowledged" the
		// transaction without it: the harness's own bug, behind the WAIT 2 losses it
		// reported before).
		PipelinePoolSize: -1,
		MaxRetries:       -1,
		DialTimeout:      time.Second,
		ReadTimeout:      c.net.timeout,
		WriteTimeout:     c.net.timeout,
		Protocol:         2,
		DisableIdentity:  true,
		DialerRetries:    1,
	})
}

// replicated finishes a write that succeeded on the master: with `wait` set, it counts as
// acknowledged only if WAIT confirms that many replicas have it; otherwise its fate is
// unknown (the master has it; a failover may lose it).
func (c *client) replicated(err error) error {
	if err != nil || c.net.wait == 0 {
		return err
	}
	n, werr := c.rdb.Wait(context.Background(), c.net.wait, time.Second).Result()
	if werr != nil {
		return werr
	}
	if n < int64(c.net.wait) {
		return errNotReplicated
	}
	return nil
}

var errNotReplicated = errors.New("WAIT: fewer replicas than asked acknowledged the write")

// run issues operations until stop is closed. A refused connection means the server is
// down: the client waits a little before the next try.
func (c *client) run(stop <-chan struct{}) {
	defer func() { c.rdb.Close() }()
	for {
		select {
		case <-stop:
			return
		default:
		}
		c.reconnect()
		var o outcome
		switch n := c.rng.Intn(10); {
		case n < 4:
			o = c.register()
		case n < 6:
			o = c.counter()
		default:
			o = c.transaction()
		}
		if o == fail {
			time.Sleep(5 * time.Millisecond)
		}
	}
}

func (c *client) register() outcome {
	ctx := context.Background()
	key := fmt.Sprintf("r:%d", c.rng.Intn(c.cfg.registers))
	in := regInput{key: key}
	var out regOutput
	var err error
	call := c.rec.now()
	switch n := c.rng.Intn(4); {
	case n < 2:
		in.kind = regRead
		out.value, err = getInt(ctx, c.rdb, key)
	case n == 2:
		in.kind, in.value = regWrite, int(c.ids.Add(1))
		err = c.replicated(c.rdb.Set(ctx, key, in.value, 0).Err())
	default:
		in.kind, in.value, in.expect = regCAS, int(c.ids.Add(1)), c.known[key]
		var swapped int64
		expect := ""
		if in.expect != 0 {
			expect = strconv.Itoa(in.expect)
		}
		swapped, err = casScript.Run(ctx, c.rdb, []string{key}, expect, in.value).Int64()
		out.swapped = swapped == 1
		if out.swapped {
			err = c.replicated(err)
		}
	}
	o, ret := classify(err, c.rec.now())
	if o == info && in.kind == regRead {
		o = fail // an unanswered read says nothing
	}
	out.unknown = o == info
	if o == ok {
		switch {
		case in.kind == regRead:
			c.known[key] = out.value
		case in.kind == regWrite || out.swapped:
			c.known[key] = in.value
		}
	}
	c.rec.add("register", c.id, in, out, call, ret, o, err)
	return o
}

func (c *client) counter() outcome {
	ctx := context.Background()
	in := ctrInput{key: fmt.Sprintf("c:%d", c.rng.Intn(c.cfg.counters))}
	var out ctrOutput
	var err error
	call := c.rec.now()
	if c.rng.Intn(2) == 0 {
		out.value, err = getInt(ctx, c.rdb, in.key)
	} else {
		in.delta = 1 + c.rng.Intn(5)
		var v int64
		v, err = c.rdb.IncrBy(ctx, in.key, int64(in.delta)).Result()
		out.value = int(v)
		err = c.replicated(err)
	}
	o, ret := classify(err, c.rec.now())
	if o == info && in.delta == 0 {
		o = fail
	}
	out.unknown = o == info
	c.rec.add("counter", c.id, in, out, call, ret, o, err)
	return o
}

func (c *client) transaction() outcome {
	ctx := context.Background()
	// Groups are retired after groupLife transactions so lists stay short (Elle does the same).
	generation := c.txns.Add(1) / int64(c.cfg.groupLife)
	in := txnInput{group: fmt.Sprintf("l:%d:%d", generation, c.rng.Intn(c.cfg.groups))}
	n := 1 + c.rng.Intn(4)
	keys := make([]string, n)
	for i := range n {
		op := microOp{key: c.rng.Intn(groupKeys)}
		if c.rng.Intn(2) == 0 {
			op.append = int(c.ids.Add(1))
		}
		in.ops = append(in.ops, op)
		// One hash tag per group: the transaction is one slot, as a cluster would need.
		keys[i] = fmt.Sprintf("{%s}:%d", in.group, op.key)
	}
	out := txnOutput{reads: make([][]int, n)}
	call := c.rec.now()
	var err error
	if c.rng.Intn(2) == 0 {
		in.how = "multi"
		cmds := make([]*redis.StringSliceCmd, n)
		_, err = c.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i, op := range in.ops {
				if op.append != 0 {
					p.RPush(ctx, keys[i], op.append)
				} else {
					cmds[i] = p.LRange(ctx, keys[i], 0, -1)
				}
			}
			return nil
		})
		if err == nil {
			for i, cmd := range cmds {
				if cmd != nil {
					out.reads[i] = atoi(cmd.Val())
				}
			}
		}
	} else {
		in.how = "script"
		args := make([]any, n)
		for i, op := range in.ops {
			args[i] = ""
			if op.append != 0 {
				args[i] = op.append
			}
		}
		var reply []any
		reply, err = txnScript.Run(ctx, c.rdb, keys, args...).Slice()
		if err == nil {
			for i, r := range reply {
				if list, isList := r.([]any); isList {
					for _, v := range list {
						out.reads[i] = append(out.reads[i], atoi([]string{v.(string)})...)
					}
					if out.reads[i] == nil {
						out.reads[i] = []int{}
					}
				}
			}
		}
	}
	for _, op := range in.ops {
		if op.append != 0 {
			err = c.replicated(err)
			break
		}
	}
	o, ret := classify(err, c.rec.now())
	out.unknown = o == info
	c.rec.add("txn", c.id, in, out, call, ret, o, err)
	return o
}

// getInt reads a register or counter (0 when the key is absent).
func getInt(ctx context.Context, rdb *redis.Client, key string) (int, error) {
	v, err := rdb.Get(ctx, key).Int()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	return v, err
}

// startClients runs o.clients clients until the returned function, which waits for them.
func startClients(o options, rec *recorder, cfg workloadConfig, n clientNet) (stop func()) {
	var ids, txns atomic.Int64
	done := make(chan struct{})
	var wg sync.WaitGroup
	for i := range o.clients {
		c := newClient(i, rec, cfg, &ids, &txns, o.seed+int64(i)+1, n)
		wg.Add(1)
		go func() { defer wg.Done(); c.run(done) }()
	}
	return func() { close(done); wg.Wait() }
}

func atoi(ss []string) []int {
	out := make([]int, 0, len(ss))
	for _, s := range ss {
		v, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			panic(fmt.Sprintf("list element %q is not a number", s))
		}
		out = append(out, v)
	}
	return out
}
