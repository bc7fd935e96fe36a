//! Differential tests for the geo commands: the same scripts against quince and a real
//! redis-server, replies compared byte for byte in RESP2 and RESP3 (coordinates, distances,
//! geohash scores and strings, search results and their order, errors).
//! Skipped without redis-server unless QUINCE_REQUIRE_REDIS=1.

use quince_test_util::{Differential, Step};

const QUINCE: &str = env!("CARGO_BIN_EXE_quince-server");

fn cmd(args: &[&str]) -> Step {
    Step::cmd(args)
}

fn run(name: &str, steps: &[Step]) {
    let Some(mut diff) = Differential::start(QUINCE) else { return };
    diff.run(name, steps);
}

/// A few cities plus points at the limits of the geohash ranges.
fn cities() -> Vec<Step> {
    vec![
        cmd(&[
            "GEOADD",
            "g",
            "13.361389",
            "38.115556",
            "Palermo",
            "15.087269",
            "37.502669",
            "Catania",
            "12.496365",
            "41.902783",
            "Rome",
            "9.189982",
            "45.464204",
            "Milan",
            "14.268124",
            "40.851775",
            "Naples",
        ]),
        cmd(&["GEOADD", "edge", "180", "85.05112878", "ne", "-180", "-85.05112878", "sw", "0", "0", "zero"]),
        cmd(&["GEOADD", "edge", "179.9999", "0", "east", "-179.9999", "0.0001", "west"]),
    ]
}

fn with(mut base: Vec<Step>, more: &[Step]) -> Vec<Step> {
    base.extend_from_slice(more);
    base
}

#[test]
fn geoadd_options_and_errors() {
    run(
        "geoadd",
        &[
            cmd(&["GEOADD", "g", "13.361389", "38.115556", "Palermo"]),
            cmd(&["GEOADD", "g", "13.361389", "38.115556", "Palermo"]),
            cmd(&["GEOADD", "g", "CH", "13.361390", "38.115556", "Palermo", "1", "1", "new"]),
            cmd(&["GEOADD", "g", "NX", "CH", "2", "2", "Palermo", "3", "3", "new2"]),
            cmd(&["GEOADD", "g", "XX", "CH", "2", "2", "Palermo", "3", "3", "new3"]),
            cmd(&["GEOADD", "g", "XX", "4", "4", "Palermo"]),
            cmd(&["GEOADD", "g", "NX", "XX", "1", "1", "a"]),
            cmd(&["GEOADD", "g", "GT", "1", "1", "a"]),
            cmd(&["GEOADD", "g", "CH", "1", "1"]),
            cmd(&["GEOADD", "g", "CH", "NX", "XX"]),
            cmd(&["GEOADD", "g", "CH", "CH", "CH"]),
            cmd(&["GEOADD", "g", "1", "1", "a", "2"]),
            cmd(&["GEOADD", "g", "x", "1", "a"]),
            cmd(&["GEOADD", "g", "1", "y", "a"]),
            cmd(&["GEOADD", "g", "1", " 1", "a"]),
            cmd(&["GEOADD", "g", "nan", "1", "a"]),
            cmd(&["GEOADD", "g", "inf", "1", "a"]),
            cmd(&["GEOADD", "g", "1", "1", "ok", "200", "100", "bad"]),
            cmd(&["GEOADD", "g", "-180.0000001", "0", "bad"]),
            cmd(&["GEOADD", "g", "0", "85.05112879", "bad"]),
            cmd(&["GEOADD", "g", "0", "-85.05112879", "bad"]),
            cmd(&["GEOADD", "g", "0x10", "1e1", "hex"]),
            cmd(&["ZRANGE", "g", "0", "-1", "WITHSCORES"]),
            cmd(&["ZCARD", "g"]),
            cmd(&["GEOADD", "missing", "XX", "1", "1", "a"]),
            cmd(&["EXISTS", "missing"]),
            cmd(&["SET", "str", "v"]),
            cmd(&["GEOADD", "str", "1", "1", "a"]),
            cmd(&["GEOADD", "str", "1", "100", "a"]),
            cmd(&["GEOADD", "str", "1", "1"]),
            cmd(&["GEOADD", "g"]),
            cmd(&["GEOADD", "g", "1", "1"]),
            cmd(&["OBJECT", "ENCODING", "g"]),
            cmd(&["TYPE", "g"]),
        ],
    );
}

#[test]
fn geoadd_encodings_follow_zset_limits() {
    run(
        "geoadd encodings",
        &[
            cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "2"]),
            cmd(&["GEOADD", "small", "1", "1", "a", "2", "2", "b"]),
            cmd(&["OBJECT", "ENCODING", "small"]),
            cmd(&["GEOADD", "small", "3", "3", "c"]),
            cmd(&["OBJECT", "ENCODING", "small"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-value", "4"]),
            cmd(&["GEOADD", "long", "1", "1", "longmember"]),
            cmd(&["OBJECT", "ENCODING", "long"]),
            cmd(&["GEORADIUS", "small", "2", "2", "500", "km", "STORE", "dst"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["GEORADIUS", "small", "2", "2", "100", "km", "STORE", "dst"]),
            cmd(&["OBJECT", "ENCODING", "dst"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-entries", "128"]),
            cmd(&["CONFIG", "SET", "zset-max-listpack-value", "64"]),
        ],
    );
}

#[test]
fn positions_hashes_and_distances() {
    run(
        "geopos/geohash/geodist",
        &with(
            cities(),
            &[
                cmd(&["GEOPOS", "g", "Palermo", "Catania", "nope", "Rome"]),
                cmd(&["GEOPOS", "edge", "ne", "sw", "zero", "east", "west"]),
                cmd(&["GEOPOS", "g"]),
                cmd(&["GEOPOS", "missing", "a", "b"]),
                cmd(&["GEOHASH", "g", "Palermo", "Catania", "nope", "Milan", "Naples"]),
                cmd(&["GEOHASH", "edge", "ne", "sw", "zero", "east", "west"]),
                cmd(&["GEOHASH", "g"]),
                cmd(&["GEOHASH", "missing", "a"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "m"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "km"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "MI"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "Ft"]),
                cmd(&["GEODIST", "g", "Palermo", "Palermo"]),
                cmd(&["GEODIST", "g", "Rome", "Milan", "km"]),
                cmd(&["GEODIST", "edge", "east", "west"]),
                cmd(&["GEODIST", "edge", "ne", "sw", "km"]),
                cmd(&["GEODIST", "g", "Palermo", "nope"]),
                cmd(&["GEODIST", "missing", "a", "b"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "parsec"]),
                cmd(&["GEODIST", "g", "Palermo", "Catania", "km", "extra"]),
                cmd(&["GEODIST", "missing", "a", "b", "parsec"]),
                // Scores set by ZADD decode to something (the C cast of odd doubles).
                cmd(&["ZADD", "odd", "-1", "neg", "1e300", "big", "inf", "pinf", "-inf", "ninf", "3.5", "frac"]),
                cmd(&["GEOPOS", "odd", "neg", "big", "pinf", "ninf", "frac"]),
                cmd(&["GEOHASH", "odd", "neg", "big", "pinf", "ninf", "frac"]),
                cmd(&["GEODIST", "odd", "neg", "ninf"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["GEOPOS", "str", "a"]),
                cmd(&["GEOHASH", "str", "a"]),
                cmd(&["GEODIST", "str", "a", "b"]),
                cmd(&["GEODIST", "str", "a", "b", "parsec"]),
            ],
        ),
    );
}

#[test]
fn georadius_replies() {
    run(
        "georadius",
        &with(
            cities(),
            &[
                cmd(&["GEORADIUS", "g", "15", "37", "200", "km"]),
                cmd(&["GEORADIUS", "g", "15", "37", "200", "km", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "DESC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "WITHDIST", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "WITHCOORD", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "WITHHASH", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "WITHHASH", "WITHCOORD", "WITHDIST", "DESC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "2"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "2", "DESC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "20", "WITHDIST"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "1", "ANY"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "2", "ANY", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000000", "m", "ASC"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1242.74", "mi", "ASC", "WITHDIST"]),
                cmd(&["GEORADIUS", "g", "15", "37", "6561679", "FT", "ASC", "WITHDIST"]),
                cmd(&["GEORADIUS", "g", "15", "37", "0", "km"]),
                cmd(&["GEORADIUS", "g", "13.361389", "38.115556", "0", "km"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "m"]),
                cmd(&["GEORADIUS", "g", "15", "37", "50000", "km", "ASC"]),
                cmd(&["GEORADIUS", "edge", "0", "0", "50000", "km", "ASC", "WITHDIST"]),
                cmd(&["GEORADIUS", "edge", "180", "0", "100", "km", "WITHDIST"]),
                cmd(&["GEORADIUS", "edge", "-180", "85", "1000", "km", "WITHDIST"]),
                cmd(&["GEORADIUS", "missing", "15", "37", "200", "km"]),
                cmd(&["GEORADIUS_RO", "g", "15", "37", "200", "km", "WITHDIST", "ASC"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "Palermo", "500", "km", "WITHDIST", "ASC"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "Rome", "1000", "km", "WITHCOORD", "DESC", "COUNT", "3"]),
                cmd(&["GEORADIUSBYMEMBER_RO", "g", "Milan", "1000", "km", "ASC"]),
                cmd(&["GEORADIUSBYMEMBER", "missing", "Palermo", "500", "km"]),
            ],
        ),
    );
}

#[test]
fn georadius_errors() {
    run(
        "georadius errors",
        &with(
            cities(),
            &[
                cmd(&["GEORADIUS", "g", "15", "37", "200"]),
                cmd(&["GEORADIUS", "g", "15", "37", "200", "parsec"]),
                cmd(&["GEORADIUS", "g", "15", "37", "-1", "km"]),
                cmd(&["GEORADIUS", "g", "15", "37", "x", "km"]),
                cmd(&["GEORADIUS", "g", "x", "37", "1", "km"]),
                cmd(&["GEORADIUS", "g", "200", "37", "1", "km"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "COUNT"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "COUNT", "0"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "COUNT", "-1"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "COUNT", "x"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "ANY"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "FOO"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "STORE"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "STORE", "d", "WITHDIST"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "WITHHASH", "STOREDIST", "d"]),
                cmd(&["GEORADIUS", "g", "15", "37", "1", "km", "FROMLONLAT", "1", "1"]),
                cmd(&["GEORADIUS_RO", "g", "15", "37", "1", "km", "STORE", "d"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "nope", "1", "km"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "Palermo", "1", "parsec"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "nope", "1", "parsec"]),
                cmd(&["GEORADIUSBYMEMBER", "missing", "nope", "x", "parsec"]),
                cmd(&["GEORADIUSBYMEMBER", "missing", "nope", "x", "parsec", "FOO"]),
                cmd(&["GEORADIUSBYMEMBER_RO", "g", "Palermo", "1", "km", "STOREDIST", "d"]),
                cmd(&["GEORADIUS", "missing", "15", "37", "1", "km", "ANY"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["GEORADIUS", "str", "15", "37", "1", "km"]),
                cmd(&["GEORADIUS", "str", "1500", "37", "1", "parsec"]),
                cmd(&["GEORADIUSBYMEMBER", "str", "a", "1", "km"]),
            ],
        ),
    );
}

#[test]
fn georadius_store() {
    run(
        "georadius store",
        &with(
            cities(),
            &[
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "STORE", "d1"]),
                cmd(&["ZRANGE", "d1", "0", "-1", "WITHSCORES"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "STOREDIST", "d2"]),
                cmd(&["ZRANGE", "d2", "0", "-1", "WITHSCORES"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "COUNT", "2", "DESC", "STOREDIST", "d3"]),
                cmd(&["ZRANGE", "d3", "0", "-1", "WITHSCORES"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "STORE", "d4", "STOREDIST", "d5"]),
                cmd(&["EXISTS", "d4", "d5"]),
                cmd(&["ZRANGE", "d5", "0", "-1", "WITHSCORES"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "STOREDIST", "d6", "STORE", "d7"]),
                cmd(&["EXISTS", "d6", "d7"]),
                cmd(&["ZRANGE", "d7", "0", "-1", "WITHSCORES"]),
                cmd(&["GEORADIUS", "g", "15", "37", "2000", "km", "STORE", "x", "STORE", "y", "STORE", "z"]),
                cmd(&["EXISTS", "x", "y", "z"]),
                cmd(&["GEORADIUSBYMEMBER", "g", "Rome", "300", "km", "STORE", "d8"]),
                cmd(&["ZRANGE", "d8", "0", "-1", "WITHSCORES"]),
                // An empty result deletes the destination, even of another type.
                cmd(&["SET", "d9", "v"]),
                cmd(&["GEORADIUS", "g", "0", "0", "1", "km", "STORE", "d9"]),
                cmd(&["EXISTS", "d9"]),
                cmd(&["SET", "d9", "v"]),
                cmd(&["GEORADIUS", "missing", "0", "0", "1", "km", "STORE", "d9"]),
                cmd(&["EXISTS", "d9"]),
                cmd(&["SET", "d10", "v"]),
                cmd(&["GEORADIUSBYMEMBER", "missing", "m", "1", "km", "STOREDIST", "d10"]),
                cmd(&["EXISTS", "d10"]),
                // The destination replaces a value of any type and loses its TTL.
                cmd(&["SET", "d11", "v", "EX", "100"]),
                cmd(&["GEORADIUS", "g", "15", "37", "200", "km", "STORE", "d11"]),
                cmd(&["TTL", "d11"]),
                cmd(&["TYPE", "d11"]),
                // Storing into the source key itself.
                cmd(&["GEORADIUS", "g", "15", "37", "200", "km", "STOREDIST", "g"]),
                cmd(&["ZRANGE", "g", "0", "-1", "WITHSCORES"]),
            ],
        ),
    );
}

#[test]
fn geosearch_and_store() {
    run(
        "geosearch",
        &with(
            cities(),
            &[
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "200", "km", "ASC"]),
                cmd(&["GEOSEARCH", "g", "FROMMEMBER", "Rome", "BYRADIUS", "1000", "km", "DESC", "WITHDIST"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "13", "40", "BYBOX", "800", "600", "km", "ASC", "WITHCOORD"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "13", "40", "BYBOX", "100", "2000", "km", "ASC"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "13", "40", "BYBOX", "2000", "100", "km", "ASC"]),
                cmd(&["GEOSEARCH", "g", "FROMMEMBER", "Naples", "BYBOX", "0", "0", "m", "WITHHASH"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "13", "40", "BYRADIUS", "2000", "km", "COUNT", "2", "WITHDIST"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "13", "40", "BYRADIUS", "2000", "km", "COUNT", "2", "ANY"]),
                cmd(&["GEOSEARCH", "edge", "FROMLONLAT", "179.99", "0", "BYBOX", "200", "200", "km", "ASC"]),
                cmd(&["GEOSEARCH", "edge", "FROMLONLAT", "-179.99", "0", "BYRADIUS", "100", "km", "ASC"]),
                cmd(&["GEOSEARCH", "missing", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMMEMBER", "nope", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMMEMBER", "Rome", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "FROMMEMBER", "Rome", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "BYRADIUS", "1", "km", "ASC"]),
                cmd(&["geosearch", "g", "FROMLONLAT", "1", "1", "ASC"]),
                cmd(&["GeoSearch", "g", "BYRADIUS", "1", "km", "WITHDIST"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "BYBOX", "1", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYBOX", "1", "1", "km", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYBOX", "-1", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYBOX", "x", "1", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYBOX", "1", "x", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYBOX", "1", "1", "parsec"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "x", "km"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STORE", "d"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "STOREDIST"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "ANY"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km", "COUNT", "0"]),
                cmd(&["GEOSEARCH", "g", "FROMLONLAT", "1", "1", "BYRADIUS"]),
                cmd(&["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "2000", "km"]),
                cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]),
                cmd(&["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "2000", "km", "STOREDIST"]),
                cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]),
                cmd(&[
                    "GEOSEARCHSTORE",
                    "d",
                    "g",
                    "FROMMEMBER",
                    "Rome",
                    "BYBOX",
                    "900",
                    "900",
                    "km",
                    "COUNT",
                    "2",
                    "DESC",
                ]),
                cmd(&["ZRANGE", "d", "0", "-1", "WITHSCORES"]),
                cmd(&["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km"]),
                cmd(&["EXISTS", "d"]),
                cmd(&["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "WITHDIST"]),
                cmd(&["GEOSEARCHSTORE", "d", "g", "FROMLONLAT", "15", "37", "BYRADIUS", "1", "km", "STORE", "x"]),
                cmd(&["GEOSEARCHSTORE", "d", "missing", "FROMMEMBER", "x", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCHSTORE", "g", "g", "FROMMEMBER", "Rome", "BYRADIUS", "300", "km"]),
                cmd(&["ZRANGE", "g", "0", "-1", "WITHSCORES"]),
                cmd(&["SET", "str", "v"]),
                cmd(&["GEOSEARCH", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCHSTORE", "d", "str", "FROMLONLAT", "1", "1", "BYRADIUS", "1", "km"]),
                cmd(&["GEOSEARCHSTORE", "str", "edge", "FROMLONLAT", "0", "0", "BYRADIUS", "1", "km"]),
                cmd(&["TYPE", "str"]),
            ],
        ),
    );
}

#[test]
fn dense_grid_searches() {
    // A grid of points every 0.5 degrees around Europe, searched with shapes of many sizes:
    // every neighbour box, step estimate and the COUNT/ANY paths get exercised.
    let mut add = vec!["GEOADD".to_string(), "grid".to_string()];
    for i in 0..24 {
        for j in 0..16 {
            add.push(format!("{}", -5.0 + f64::from(i) * 0.5));
            add.push(format!("{}", 36.0 + f64::from(j) * 0.5));
            add.push(format!("p{i}_{j}"));
        }
    }
    let add: Vec<&str> = add.iter().map(String::as_str).collect();
    let mut steps = vec![cmd(&add)];
    for (lon, lat) in [("0", "40"), ("3.3", "41.7"), ("-5", "36"), ("6.5", "43.5"), ("10", "50")] {
        for radius in ["1", "30", "55.6", "150", "400", "2500"] {
            steps.push(cmd(&["GEORADIUS", "grid", lon, lat, radius, "km", "ASC", "WITHDIST"]));
            steps.push(cmd(&["GEOSEARCH", "grid", "FROMLONLAT", lon, lat, "BYBOX", radius, radius, "km", "DESC"]));
            steps.push(cmd(&["GEOSEARCH", "grid", "FROMLONLAT", lon, lat, "BYRADIUS", radius, "km", "COUNT", "5"]));
        }
    }
    steps.push(cmd(&["GEORADIUSBYMEMBER", "grid", "p3_4", "120", "km", "COUNT", "7", "DESC", "WITHHASH"]));
    steps.push(cmd(&[
        "GEOSEARCHSTORE",
        "dst",
        "grid",
        "FROMMEMBER",
        "p10_10",
        "BYBOX",
        "300",
        "100",
        "km",
        "STOREDIST",
    ]));
    steps.push(cmd(&["ZRANGE", "dst", "0", "-1", "WITHSCORES"]));
    run("grid", &steps);
}

#[test]
fn command_metadata() {
    let names = [
        "geoadd",
        "geodist",
        "geohash",
        "geopos",
        "georadius",
        "georadius_ro",
        "georadiusbymember",
        "georadiusbymember_ro",
        "geosearch",
        "geosearchstore",
    ];
    let mut steps = Vec::new();
    for name in names {
        steps.push(cmd(&["COMMAND", "INFO", name]));
        steps.push(cmd(&["COMMAND", "DOCS", name]));
    }
    steps.extend([
        cmd(&["COMMAND", "GETKEYS", "GEORADIUS", "g", "1", "1", "1", "km", "STORE", "a", "STOREDIST", "b"]),
        cmd(&["COMMAND", "GETKEYS", "GEORADIUSBYMEMBER", "g", "m", "1", "km", "STOREDIST", "b"]),
        cmd(&["COMMAND", "GETKEYS", "GEOSEARCHSTORE", "d", "s", "FROMMEMBER", "m", "BYRADIUS", "1", "km"]),
        cmd(&["COMMAND", "GETKEYSANDFLAGS", "GEORADIUS", "g", "1", "1", "1", "km", "STORE", "a"]),
    ]);
    run("geo command metadata", &steps);
}

/// Runs `(connection, command)` pairs on two connections per server and compares the
/// transcripts (WATCH in one connection, writes in the other).
fn run_two_clients(name: &str, script: &[(usize, Vec<&str>)]) {
    let Some(diff) = Differential::start(QUINCE) else { return };
    let transcript = |server: &quince_test_util::ServerProcess| {
        let mut conns = [server.client(), server.client()];
        conns[0].call(&["FLUSHALL"]);
        script.iter().map(|(i, args)| conns[*i].call(args)).collect::<Vec<_>>()
    };
    let (q, r) = (transcript(&diff.quince), transcript(&diff.redis));
    for (i, (q, r)) in q.iter().zip(&r).enumerate() {
        assert_eq!(String::from_utf8_lossy(q), String::from_utf8_lossy(r), "{name}: step {i} {:?}", script[i].1);
    }
}

#[test]
fn watch_sees_only_written_keys() {
    let mut script = vec![(1, vec!["GEOADD", "g", "1", "1", "a", "2", "2", "b"])];
    for (watched, write) in [
        ("g", vec!["GEOADD", "g", "1", "1", "a"]),
        ("g", vec!["GEOADD", "g", "3", "3", "c"]),
        ("g", vec!["GEOADD", "g", "XX", "4", "4", "d"]),
        ("g", vec!["GEORADIUS", "g", "1", "1", "500", "km"]),
        ("g", vec!["GEORADIUS", "g", "1", "1", "500", "km", "STORE", "dst"]),
        ("dst", vec!["GEORADIUS", "g", "1", "1", "500", "km", "STOREDIST", "dst"]),
        ("g", vec!["GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "a", "BYRADIUS", "500", "km"]),
        ("dst", vec!["GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "a", "BYRADIUS", "1", "m"]),
        ("dst", vec!["GEOSEARCHSTORE", "dst", "g", "FROMMEMBER", "a", "BYRADIUS", "1", "m"]),
        ("g", vec!["GEOSEARCH", "g", "FROMMEMBER", "a", "BYRADIUS", "500", "km"]),
    ] {
        script.extend([
            (0, vec!["WATCH", watched]),
            (0, vec!["MULTI"]),
            (0, vec!["PING"]),
            (1, write),
            (0, vec!["EXEC"]),
        ]);
    }
    run_two_clients("geo and WATCH", &script);
}
