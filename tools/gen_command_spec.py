#!/usr/bin/env python3
"""Print CommandSpec builder code (crates/engine/src/command.rs) for Redis commands, from
the command JSON files in a Redis 7.0.15 source tree (src/commands/*.json).
usage: tools/gen_command_spec.py /path/to/redis/src/commands name:handler ...
Review the output: multiple_token arguments and unusual key specs are marked in comments."""
import json, sys, os

TYPES = {"string": "String", "integer": "Integer", "double": "Double", "key": "Key", "pattern": "Pattern",
         "unix-time": "UnixTime", "pure-token": "PureToken", "oneof": "OneOf", "block": "Block"}

def q(s):
    return json.dumps(s)

def arg(a, ind):
    name = a["name"]; t = a["type"]
    if t == "key":
        code = f'ArgDoc::key({q(name)}, {a["key_spec_index"]})'
    elif t == "pure-token":
        code = f'ArgDoc::token({q(name)}, {q(a["token"])})'
    elif t in ("oneof", "block"):
        kids = ",\n".join(" " * (ind + 4) + arg(c, ind + 4) for c in a["arguments"])
        fn = "one_of" if t == "oneof" else "block"
        code = f'ArgDoc::{fn}(\n{" " * (ind + 2)}{q(name)},\n{" " * (ind + 2)}vec![\n{kids},\n{" " * (ind + 2)}],\n{" " * ind})'
    else:
        code = f'ArgDoc::new({q(name)}, ArgType::{TYPES[t]})'
    if "token" in a and t != "pure-token":
        code += f'.after({q(a["token"])})'
    if a.get("optional"):
        code += ".optional()"
    if a.get("multiple"):
        code += ".multiple()"
    if a.get("multiple_token"):
        code += " /* multiple_token */"
    if a.get("since"):
        code += f'.since({q(a["since"])})'
    return code

def keyspec(k):
    flags = " ".join(f if f in ("RO", "RW", "OW", "RM") else f.lower() for f in k["flags"])
    bs = k["begin_search"]; fk = k["find_keys"]
    if "index" in bs and "range" in fk:
        r = fk["range"]
        s = f'.keys({q(flags)}, {bs["index"]["pos"]}, {r["lastkey"]}, {r["step"]})'
        if r["limit"]:
            s += f' /* limit {r["limit"]} */'
        return s
    if "index" in bs and "keynum" in fk:
        r = fk["keynum"]
        return f'.keys_keynum({q(flags)}, {bs["index"]["pos"]}, {r["keynumidx"]}, {r["firstkey"]}, {r["step"]})'
    if "keyword" in bs and "range" in fk:
        r = fk["range"]; kw = bs["keyword"]
        return f'.keys_keyword({q(flags)}, {q(kw["keyword"])}, {kw["startfrom"]}, {r["lastkey"]}, {r["step"]}, {r["limit"]})'
    return f'/* unsupported key spec {json.dumps(k)} */'

src = sys.argv[1]
for item in sys.argv[2:]:
    name, handler = item.split(":")
    d = json.load(open(os.path.join(src, name + ".json")))
    (cname, v), = d.items()
    flags = " ".join(f.lower() for f in v.get("command_flags", []))
    acl = " ".join(c.lower() for c in v.get("acl_categories", []))
    out = f'CommandSpec::new({q(cname.lower())}, {v["arity"]}, {q(flags)}, {q(acl)}, {handler})\n'
    out += f'    .doc({q(v["group"])}, {q(v["since"])}, {q(v["summary"])}, {q(v.get("complexity", ""))})\n'
    if v.get("deprecated_since"):
        out += f'    .deprecated({q(v["deprecated_since"])}, {q(v.get("replaced_by", ""))})\n'
    if v.get("history"):
        out += "    .history(&[" + ", ".join(f"({q(a)}, {q(b)})" for a, b in v["history"]) + "])\n"
    if v.get("command_tips"):
        out += "    .tips(&[" + ", ".join(q(t.lower()) for t in v["command_tips"]) + "])\n"
    for k in v.get("key_specs", []):
        out += "    " + keyspec(k) + "\n"
        if k.get("notes"):
            out += f'    .key_notes({q(k["notes"])})\n'
    if v.get("arguments"):
        out += "    .args(vec![\n" + "".join("        " + arg(a, 8) + ",\n" for a in v["arguments"]) + "    ]),"
    else:
        out += "    ,"
    print(out)
