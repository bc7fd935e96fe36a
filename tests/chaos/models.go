package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/anishathalye/porcupine"
)

// Porcupine models of the three workloads. Each is nondeterministic only where an operation's
// outcome is unknown (it may or may not have taken effect); everything else must match the
// model exactly. Histories are partitioned by key (or key group), which Porcupine checks
// independently: linearizability is compositional.

// ---- registers: GET, SET, compare-and-set in Lua ----

type regKind int

const (
	regRead regKind = iota
	regWrite
	regCAS
)

type regInput struct {
	kind   regKind
	key    string
	value  int // written (SET, CAS)
	expect int // CAS: the value it must find; 0 is "no key"
}

type regOutput struct {
	value   int  // GET: what it read (0: no key)
	swapped bool // CAS: whether it wrote
	unknown bool
}

var registerModel = porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(regInput).key }),
	Init:      func() []any { return []any{0} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(int), input.(regInput), output.(regOutput)
		switch in.kind {
		case regRead:
			if out.unknown || out.value == s {
				return []any{s}
			}
		case regWrite:
			if out.unknown {
				return []any{s, in.value}
			}
			return []any{in.value}
		case regCAS:
			switch {
			case out.unknown && s == in.expect:
				return []any{s, in.value}
			case out.unknown:
				return []any{s}
			case out.swapped && s == in.expect:
				return []any{in.value}
			case !out.swapped && s != in.expect:
				return []any{s}
			}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(regInput), output.(regOutput)
		res := "?"
		switch {
		case out.unknown:
		case in.kind == regRead:
			res = strconv.Itoa(out.value)
		case in.kind == regCAS:
			res = strconv.FormatBool(out.swapped)
		default:
			res = "OK"
		}
		switch in.kind {
		case regRead:
			return fmt.Sprintf("get(%s) -> %s", in.key, res)
		case regWrite:
			return fmt.Sprintf("set(%s, %d) -> %s", in.key, in.value, res)
		default:
			return fmt.Sprintf("cas(%s, %d -> %d) -> %s", in.key, in.expect, in.value, res)
		}
	},
}

// ---- counters: INCRBY and GET ----

type ctrInput struct {
	key   string
	delta int // 0: a read
}

type ctrOutput struct {
	value   int
	unknown bool
}

var counterModel = porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(ctrInput).key }),
	Init:      func() []any { return []any{0} },
	Step: func(state, input, output any) []any {
		s, in, out := state.(int), input.(ctrInput), output.(ctrOutput)
		switch {
		case in.delta == 0 && (out.unknown || out.value == s):
			return []any{s}
		case in.delta != 0 && out.unknown:
			return []any{s, s + in.delta}
		case in.delta != 0 && out.value == s+in.delta:
			return []any{s + in.delta}
		}
		return nil
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(ctrInput), output.(ctrOutput)
		res := strconv.Itoa(out.value)
		if out.unknown {
			res = "?"
		}
		if in.delta == 0 {
			return fmt.Sprintf("get(%s) -> %s", in.key, res)
		}
		return fmt.Sprintf("incrby(%s, %d) -> %s", in.key, in.delta, res)
	},
}

// ---- list-append transactions (MULTI/EXEC or one script) over a group of keys ----
//
// Elle's list-append workload, checked for strict serializability: a transaction is one
// operation on the whole group's state, so Porcupine checks that transactions took effect
// one at a time, in an order that respects real time, each read seeing exactly the appends
// ordered before it.

type microOp struct {
	key    int // index within the group
	append int // 0: a read
}

type txnInput struct {
	group string
	ops   []microOp
	how   string // "multi" or "script"
}

type txnOutput struct {
	reads   [][]int // per micro-op; reads only
	unknown bool
}

// A group's state is its lists, written as "1,2|3||" so states compare with ==.
func encodeLists(lists [][]int) string {
	var b strings.Builder
	for i, l := range lists {
		if i > 0 {
			b.WriteByte('|')
		}
		for j, v := range l {
			if j > 0 {
				b.WriteByte(',')
			}
			b.WriteString(strconv.Itoa(v))
		}
	}
	return b.String()
}

func decodeLists(s string, n int) [][]int {
	lists := make([][]int, n)
	for i, part := range strings.SplitN(s, "|", n) {
		if part == "" {
			continue
		}
		for _, f := range strings.Split(part, ",") {
			v, _ := strconv.Atoi(f)
			lists[i] = append(lists[i], v)
		}
	}
	return lists
}

const groupKeys = 3

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var txnModel = porcupine.NondeterministicModel{
	Partition: partitionBy(func(in any) string { return in.(txnInput).group }),
	Init:      func() []any { return []any{encodeLists(make([][]int, groupKeys))} },
	Step: func(state, input, output any) []any {
		in, out := input.(txnInput), output.(txnOutput)
		lists := decodeLists(state.(string), groupKeys)
		for i, op := range in.ops {
			if op.append != 0 {
				lists[op.key] = append(lists[op.key], op.append)
			} else if !out.unknown && !equalInts(out.reads[i], lists[op.key]) {
				return nil
			}
		}
		next := encodeLists(lists)
		if out.unknown {
			return []any{state, next}
		}
		return []any{next}
	},
	DescribeOperation: func(input, output any) string {
		in, out := input.(txnInput), output.(txnOutput)
		parts := make([]string, len(in.ops))
		for i, op := range in.ops {
			switch {
			case op.append != 0:
				parts[i] = fmt.Sprintf("append %d %d", op.key, op.append)
			case out.unknown:
				parts[i] = fmt.Sprintf("r %d ?", op.key)
			default:
				parts[i] = fmt.Sprintf("r %d %v", op.key, out.reads[i])
			}
		}
		return fmt.Sprintf("%s %s [%s]", in.how, in.group, strings.Join(parts, "; "))
	},
	DescribeState: func(state any) string { return state.(string) },
}

func partitionBy(key func(input any) string) func([]porcupine.Operation) [][]porcupine.Operation {
	return func(history []porcupine.Operation) [][]porcupine.Operation {
		index := map[string]int{}
		var parts [][]porcupine.Operation
		for _, op := range history {
			k := key(op.Input)
			i, seen := index[k]
			if !seen {
				i = len(parts)
				index[k] = i
				parts = append(parts, nil)
			}
			parts[i] = append(parts[i], op)
		}
		return parts
	}
}
