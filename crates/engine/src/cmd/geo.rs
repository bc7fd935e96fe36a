//! Geo commands (Redis's geo.c): positions stored as sorted-set members whose score is the
//! 52-bit geohash of their coordinates (see `crate::geohash`). GEOADD, GEODIST, GEOHASH,
//! GEOPOS, the GEORADIUS family and GEOSEARCH / GEOSEARCHSTORE.

use crate::command::{ArgDoc, ArgType, CommandSpec};
use crate::error::{CmdError, CmdResult};
use crate::exec::Ctx;
use crate::geohash::{self, Shape, ShapeKind};
use crate::keyspace::{TtlOnWrite, Value};
use crate::longdouble::LongDouble;
use crate::pubsub::notify;
use crate::reply::ReplySink;
use crate::types::zset::{AddFlags, AddOutcome, ScoreRange};
use crate::types::{Bytes, ZSetValue};

use super::is;
use super::sort::{pqsort, string2d};

// ---------------------------------------------------------------------------------------
// Argument helpers
// ---------------------------------------------------------------------------------------

fn parse_double(arg: &[u8], msg: &str) -> Result<f64, CmdError> {
    string2d(arg).ok_or_else(|| CmdError::msg(msg))
}

/// A longitude and latitude pair within the geohash limits (extractLongLatOrReply).
fn parse_lon_lat(lon: &[u8], lat: &[u8]) -> Result<[f64; 2], CmdError> {
    let lon = parse_double(lon, "ERR value is not a valid float")?;
    let lat = parse_double(lat, "ERR value is not a valid float")?;
    if !(geohash::LONG_MIN..=geohash::LONG_MAX).contains(&lon) || !(geohash::LAT_MIN..=geohash::LAT_MAX).contains(&lat)
    {
        return Err(CmdError::msg(format!("ERR invalid longitude,latitude pair {lon:.6},{lat:.6}")));
    }
    Ok([lon, lat])
}

/// Meters per unit (extractUnitOrReply).
fn parse_unit(arg: &[u8]) -> Result<f64, CmdError> {
    match arg.to_ascii_lowercase().as_slice() {
        b"m" => Ok(1.0),
        b"km" => Ok(1000.0),
        b"ft" => Ok(0.3048),
        b"mi" => Ok(1609.34),
        _ => Err(CmdError::msg("ERR unsupported unit provided. please use M, KM, FT, MI")),
    }
}

/// `<radius> <unit>`: (radius, meters per unit).
fn parse_radius(radius: &[u8], unit: &[u8]) -> Result<(f64, f64), CmdError> {
    let radius = parse_double(radius, "ERR need numeric radius")?;
    if radius < 0.0 {
        return Err(CmdError::msg("ERR radius cannot be negative"));
    }
    Ok((radius, parse_unit(unit)?))
}

/// `<width> <height> <unit>`: (width, height, meters per unit).
fn parse_box(width: &[u8], height: &[u8], unit: &[u8]) -> Result<(f64, f64, f64), CmdError> {
    let width = parse_double(width, "ERR need numeric width")?;
    let height = parse_double(height, "ERR need numeric height")?;
    if height < 0.0 || width < 0.0 {
        return Err(CmdError::msg("ERR height or width cannot be negative"));
    }
    Ok((width, height, parse_unit(unit)?))
}

/// Coordinates as Redis replies them (addReplyHumanLongDouble: `%.17Lf` trimmed).
fn reply_coord(out: &mut dyn ReplySink, x: f64) {
    let text = LongDouble::from_f64(x).to_human_string().unwrap_or_default();
    out.double_text(x, text.as_bytes());
}

/// The sorted set at `key` (read without recording an access), or WRONGTYPE.
fn peek_zset<'c>(ctx: &'c mut Ctx<'_>, key: &[u8]) -> Result<Option<&'c ZSetValue>, CmdError> {
    let now = ctx.now_ms;
    match ctx.db(key).peek(key, now).map(|e| &e.value) {
        None => Ok(None),
        Some(Value::ZSet(z)) => Ok(Some(z)),
        Some(_) => Err(CmdError::WrongType),
    }
}

/// Looks `key` up as lookupKeyRead does (access recorded, hit or miss counted): whether a
/// sorted set is there, or WRONGTYPE.
fn lookup_read(ctx: &mut Ctx<'_>, key: &[u8]) -> Result<bool, CmdError> {
    let now = ctx.now_ms;
    let found = match ctx.db(key).get(key, now).map(|e| &e.value) {
        None => Ok(false),
        Some(Value::ZSet(_)) => Ok(true),
        Some(_) => Err(CmdError::WrongType),
    };
    ctx.hit(key, found != Ok(false));
    found
}

// ---------------------------------------------------------------------------------------
// GEOADD GEODIST GEOHASH GEOPOS
// ---------------------------------------------------------------------------------------

/// GEOADD key [NX|XX] [CH] longitude latitude member [...] — O(log(N)) per item. Works as
/// ZADD with the geohash of each position as score.
fn geoadd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let mut flags = AddFlags::default();
    let mut ch = false;
    let mut first = 2;
    while first < args.len() {
        let opt = args[first];
        if is(opt, "nx") {
            flags.nx = true;
        } else if is(opt, "xx") {
            flags.xx = true;
        } else if is(opt, "ch") {
            ch = true;
        } else {
            break;
        }
        first += 1;
    }
    let elements = args.len() - first;
    if !elements.is_multiple_of(3) || (flags.xx && flags.nx) {
        return Err(CmdError::Syntax);
    }
    // ZADD rejects an empty element list (GEOADD key CH, ...).
    if elements == 0 {
        return Err(CmdError::Syntax);
    }
    let mut items = Vec::with_capacity(elements / 3);
    for triple in args[first..].chunks(3) {
        let [lon, lat] = parse_lon_lat(triple[0], triple[1])?;
        let hash = geohash::encode_wgs84(lon, lat, geohash::STEP_MAX).unwrap_or_default();
        // Redis hands ZADD the score as decimal text; it parses back exactly.
        items.push((hash.align52() as f64, triple[2]));
    }
    let key = args[1];
    let (now, limits) = (ctx.now_ms, ctx.limits());
    let db = ctx.db(key);
    let existing = match db.get_mut(key, now).map(|e| &mut e.value) {
        None => None,
        Some(Value::ZSet(z)) => Some(z),
        Some(_) => return Err(CmdError::WrongType),
    };
    if existing.is_none() && flags.xx {
        out.integer(0);
        return Ok(());
    }
    let mut created = None;
    let zset = match existing {
        Some(z) => z,
        None => created.insert(ZSetValue::new_for_add(items[0].1.len(), &limits)),
    };
    let (mut added, mut updated) = (0usize, 0usize);
    for &(score, member) in &items {
        match zset.add(member, score, flags, &limits) {
            AddOutcome::Added(_) => added += 1,
            AddOutcome::Updated(_) => updated += 1,
            _ => {}
        }
    }
    let mut changes = (added + updated) as u64;
    match created {
        Some(z) if !z.is_empty() => {
            db.set(key, Value::ZSet(z), TtlOnWrite::Clear, now);
            // `set` counted one change already.
            changes -= 1;
        }
        Some(_) => {}
        None if added > 0 => db.signal_ready(key),
        None => {}
    }
    ctx.dirty(changes);
    if added + updated > 0 {
        ctx.notify(notify::ZSET, "zadd", key);
        // Logged as the ZADD Redis's geoaddCommand turns it into: `zadd key [options]
        // <52-bit geohash> member ...`, so no coordinate is parsed again on replay.
        if ctx.propagating() {
            let mut zadd: Vec<Vec<u8>> = vec![b"zadd".to_vec()];
            zadd.extend(args[1..first].iter().map(|a| a.to_vec()));
            for &(score, member) in &items {
                zadd.push((score as u64).to_string().into_bytes());
                zadd.push(member.to_vec());
            }
            ctx.propagate_as(&zadd);
        }
    }
    out.integer((if ch { added + updated } else { added }) as i64);
    Ok(())
}

/// GEODIST key member1 member2 [M|KM|FT|MI] — O(log(N)).
fn geodist(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let to_meter = match args.len() {
        5 => parse_unit(args[4])?,
        n if n > 5 => return Err(CmdError::Syntax),
        _ => 1.0,
    };
    let key = args[1];
    if !lookup_read(ctx, key)? {
        out.null();
        return Ok(());
    }
    let zset = peek_zset(ctx, key)?.expect("looked up above");
    let (Some(s1), Some(s2)) = (zset.score(args[2]), zset.score(args[3])) else {
        out.null();
        return Ok(());
    };
    match (geohash::decode_score(s1), geohash::decode_score(s2)) {
        (Some([x1, y1]), Some([x2, y2])) => {
            let d = geohash::distance(x1, y1, x2, y2) / to_meter;
            out.bulk(geohash::format_distance(d).as_bytes());
        }
        _ => out.null(),
    }
    Ok(())
}

/// GEOHASH key [member ...] — O(log(N)) per member: 11-character standard geohashes.
fn geohash_cmd(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let key = args[1];
    let exists = lookup_read(ctx, key)?;
    out.array(args.len() - 2);
    for member in &args[2..] {
        let score = if exists { peek_zset(ctx, key)?.and_then(|z| z.score(member)) } else { None };
        match score.and_then(geohash::standard_geohash) {
            Some(text) => out.bulk(&text),
            None => out.null(),
        }
    }
    Ok(())
}

/// GEOPOS key [member ...] — O(N) in the members requested.
fn geopos(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    let key = args[1];
    let exists = lookup_read(ctx, key)?;
    out.array(args.len() - 2);
    for member in &args[2..] {
        let score = if exists { peek_zset(ctx, key)?.and_then(|z| z.score(member)) } else { None };
        match score.and_then(geohash::decode_score) {
            Some([lon, lat]) => {
                out.array(2);
                reply_coord(out, lon);
                reply_coord(out, lat);
            }
            None => out.null_array(),
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Searches: GEORADIUS* and GEOSEARCH*
// ---------------------------------------------------------------------------------------

/// Which command of the search family runs (Redis's RADIUS_* / GEOSEARCH flags).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Variant {
    /// GEORADIUS / GEORADIUS_RO (`store` false for the latter).
    Radius {
        store: bool,
    },
    /// GEORADIUSBYMEMBER / GEORADIUSBYMEMBER_RO.
    ByMember {
        store: bool,
    },
    Search,
    SearchStore,
}

impl Variant {
    fn is_search(self) -> bool {
        matches!(self, Variant::Search | Variant::SearchStore)
    }

    fn accepts_store(self) -> bool {
        matches!(self, Variant::Radius { store: true } | Variant::ByMember { store: true })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    None,
    Asc,
    Desc,
}

/// A parsed search request.
struct Request<'a> {
    /// None when the source key is missing and the centre could not be resolved (the
    /// reply is then empty, after the options were checked).
    shape: Option<Shape>,
    with_dist: bool,
    with_hash: bool,
    with_coord: bool,
    order: Order,
    any: bool,
    /// 0: unlimited.
    count: i64,
    store: Option<&'a [u8]>,
    store_dist: bool,
}

/// The position of `member` in the source set, or Redis's decode error.
fn member_position(ctx: &mut Ctx<'_>, key: &[u8], member: &[u8]) -> Result<[f64; 2], CmdError> {
    peek_zset(ctx, key)?
        .and_then(|z| z.score(member))
        .and_then(geohash::decode_score)
        .ok_or_else(|| CmdError::msg("ERR could not decode requested zset member"))
}

/// Parses a search the way georadiusGeneric does, in the same order (so the first error
/// is the same): the fixed arguments, then each option in turn.
fn parse_request<'a>(
    ctx: &mut Ctx<'_>,
    args: &[&'a [u8]],
    src: &[u8],
    exists: bool,
    variant: Variant,
) -> Result<Request<'a>, CmdError> {
    let mut center = None;
    let mut kind = None;
    let mut conversion = 1.0;
    let base = match variant {
        Variant::Radius { .. } => {
            center = Some(parse_lon_lat(args[2], args[3])?);
            let (radius, unit) = parse_radius(args[4], args[5])?;
            (kind, conversion) = (Some(ShapeKind::Circle { radius }), unit);
            6
        }
        Variant::ByMember { .. } if !exists => 5,
        Variant::ByMember { .. } => {
            center = Some(member_position(ctx, src, args[2])?);
            let (radius, unit) = parse_radius(args[3], args[4])?;
            (kind, conversion) = (Some(ShapeKind::Circle { radius }), unit);
            5
        }
        Variant::Search => 2,
        Variant::SearchStore => 3,
    };
    let mut r = Request {
        shape: None,
        with_dist: false,
        with_hash: false,
        with_coord: false,
        order: Order::None,
        any: false,
        count: 0,
        store: (variant == Variant::SearchStore).then_some(args[1]),
        store_dist: false,
    };
    let (mut from_member, mut from_lonlat, mut by_radius, mut by_box) = (false, false, false, false);
    let opts = &args[base.min(args.len())..];
    let remaining = opts.len();
    let mut i = 0;
    while i < remaining {
        let arg = opts[i];
        let search = variant.is_search();
        if is(arg, "withdist") {
            r.with_dist = true;
        } else if is(arg, "withhash") {
            r.with_hash = true;
        } else if is(arg, "withcoord") {
            r.with_coord = true;
        } else if is(arg, "any") {
            r.any = true;
        } else if is(arg, "asc") {
            r.order = Order::Asc;
        } else if is(arg, "desc") {
            r.order = Order::Desc;
        } else if is(arg, "count") && i + 1 < remaining {
            r.count = super::parse_i64(opts[i + 1])?;
            if r.count <= 0 {
                return Err(CmdError::msg("ERR COUNT must be > 0"));
            }
            i += 1;
        } else if (is(arg, "store") || is(arg, "storedist")) && i + 1 < remaining && variant.accepts_store() {
            r.store = Some(opts[i + 1]);
            r.store_dist = is(arg, "storedist");
            i += 1;
        } else if is(arg, "storedist") && variant == Variant::SearchStore {
            r.store_dist = true;
        } else if is(arg, "frommember") && i + 1 < remaining && search && !from_lonlat {
            // Without a source key the member can't be resolved: parsing goes on and the
            // reply is empty.
            if exists {
                center = Some(member_position(ctx, src, opts[i + 1])?);
            }
            from_member = true;
            i += 1;
        } else if is(arg, "fromlonlat") && i + 2 < remaining && search && !from_member {
            center = Some(parse_lon_lat(opts[i + 1], opts[i + 2])?);
            from_lonlat = true;
            i += 2;
        } else if is(arg, "byradius") && i + 2 < remaining && search && !by_box {
            let (radius, unit) = parse_radius(opts[i + 1], opts[i + 2])?;
            (kind, conversion) = (Some(ShapeKind::Circle { radius }), unit);
            by_radius = true;
            i += 2;
        } else if is(arg, "bybox") && i + 3 < remaining && search && !by_radius {
            let (width, height, unit) = parse_box(opts[i + 1], opts[i + 2], opts[i + 3])?;
            (kind, conversion) = (Some(ShapeKind::Rect { width, height }), unit);
            by_box = true;
            i += 3;
        } else {
            return Err(CmdError::Syntax);
        }
        i += 1;
    }
    if r.store.is_some() && (r.with_dist || r.with_hash || r.with_coord) {
        let who = if variant == Variant::SearchStore { "GEOSEARCHSTORE" } else { "STORE option in GEORADIUS" };
        return Err(CmdError::msg(format!(
            "ERR {who} is not compatible with WITHDIST, WITHHASH and WITHCOORD options"
        )));
    }
    let name = String::from_utf8_lossy(args[0]);
    if variant.is_search() && !(from_member || from_lonlat) {
        return Err(CmdError::msg(format!("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for {name}")));
    }
    if variant.is_search() && !(by_radius || by_box) {
        return Err(CmdError::msg(format!("ERR exactly one of BYRADIUS and BYBOX can be specified for {name}")));
    }
    if r.any && r.count == 0 {
        return Err(CmdError::msg("ERR the ANY argument requires COUNT argument"));
    }
    if let (Some(center), Some(kind)) = (center, kind) {
        r.shape = Some(Shape { kind, center, conversion });
    }
    Ok(r)
}

/// A match: member, position, distance from the centre (meters), score.
struct GeoPoint {
    member: Bytes,
    lon: f64,
    lat: f64,
    dist: f64,
    score: f64,
}

/// Appends the members of `zset` inside `shape` whose scores fall in the geohash box `hash`
/// (geoGetPointsInRange), stopping once `limit` points (0: no limit) are collected.
fn points_in_box(zset: &ZSetValue, hash: geohash::HashBits, shape: &Shape, points: &mut Vec<GeoPoint>, limit: usize) {
    let (min, max) = hash.score_range();
    let range = ScoreRange { min: min as f64, max: max as f64, min_exclusive: false, max_exclusive: true };
    for (member, score) in zset.range_by_score(&range, false) {
        if let Some([lon, lat]) = geohash::decode_score(score) {
            if let Some(dist) = shape.contains([lon, lat]) {
                points.push(GeoPoint { member: member.into(), lon, lat, dist, score });
            }
        }
        if limit > 0 && points.len() >= limit {
            break;
        }
    }
}

/// Every member inside `shape`, scanning the centre box and its neighbours
/// (membersOfAllNeighbors), skipping a box equal to the one scanned just before.
fn search(zset: &ZSetValue, shape: &Shape, limit: usize) -> Vec<GeoPoint> {
    let areas = geohash::areas_for_shape(shape);
    let boxes = areas.boxes();
    let mut points = Vec::new();
    let mut last_processed = 0;
    for (i, hash) in boxes.iter().enumerate() {
        if hash.is_zero() {
            continue;
        }
        // A huge radius can make adjacent neighbours the same box.
        if last_processed != 0 && *hash == boxes[last_processed] {
            continue;
        }
        if limit > 0 && points.len() >= limit {
            break;
        }
        points_in_box(zset, *hash, shape, &mut points, limit);
        last_processed = i;
    }
    points
}

/// GEORADIUS / GEORADIUSBYMEMBER / GEOSEARCH / GEOSEARCHSTORE and the _RO forms (Redis's
/// georadiusGeneric).
fn georadius_generic(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink, variant: Variant) -> CmdResult {
    let src = args[if variant == Variant::SearchStore { 2 } else { 1 }];
    let mut exists = lookup_read(ctx, src)?;
    let request = loop {
        let request = parse_request(ctx, args, src, exists, variant)?;
        // A STORE key the key specs did not find (an earlier STORE overridden by a later
        // one) is locked now; if that meant retaking the locks, parse again.
        match request.store {
            Some(store) if ctx.lock_extra(&[store]) => exists = peek_zset(ctx, src)?.is_some(),
            _ => break request,
        }
    };
    let now = ctx.now_ms;
    let Some(shape) = request.shape.filter(|_| exists) else {
        match request.store {
            Some(store) => {
                if ctx.db(store).remove(store, now) {
                    ctx.notify(notify::GENERIC, "del", store);
                }
                out.integer(0);
            }
            None => out.array(0),
        }
        return Ok(());
    };
    let mut order = request.order;
    // COUNT without an order would return arbitrary matches: the nearest ones are meant.
    if request.count != 0 && order == Order::None && !request.any {
        order = Order::Asc;
    }
    let limit = if request.any { request.count as usize } else { 0 };
    let mut points = match peek_zset(ctx, src)? {
        Some(zset) => search(zset, &shape, limit),
        None => Vec::new(),
    };
    if points.is_empty() && request.store.is_none() {
        out.array(0);
        return Ok(());
    }
    let returned = if request.count == 0 { points.len() } else { points.len().min(request.count as usize) };
    if order != Order::None {
        let mut by_dist = |a: &GeoPoint, b: &GeoPoint| {
            let asc = a.dist.partial_cmp(&b.dist).unwrap_or(std::cmp::Ordering::Equal);
            if order == Order::Desc {
                asc.reverse()
            } else {
                asc
            }
        };
        if returned == points.len() {
            // glibc's qsort is a merge sort: stable, equal distances keep scan order.
            points.sort_by(by_dist);
        } else {
            pqsort(&mut points, &mut by_dist, 0, returned as i64 - 1);
        }
    }
    points.truncate(returned);
    for p in &mut points {
        p.dist /= shape.conversion;
    }
    match request.store {
        None => reply_points(out, &points, &request),
        Some(store) => {
            let limits = ctx.limits();
            let mut entries: Vec<(Bytes, f64)> = Vec::with_capacity(points.len());
            let mut seen = hashbrown::HashSet::with_capacity(points.len());
            for p in points {
                if seen.insert(p.member.clone()) {
                    entries.push((p.member, if request.store_dist { p.dist } else { p.score }));
                }
            }
            let db = ctx.db(store);
            if returned > 0 {
                db.set(store, Value::ZSet(ZSetValue::from_entries(entries, &limits)), TtlOnWrite::Clear, now);
                // Redis counts one change per stored member; `set` counted one.
                ctx.dirty(returned as u64 - 1);
                let event = if ctx.spec.name.starts_with("geosearch") { "geosearchstore" } else { "georadiusstore" };
                ctx.notify(notify::ZSET, event, store);
            } else if db.remove(store, now) {
                ctx.notify(notify::GENERIC, "del", store);
            }
            out.integer(returned as i64);
        }
    }
    Ok(())
}

fn reply_points(out: &mut dyn ReplySink, points: &[GeoPoint], request: &Request<'_>) {
    let options = usize::from(request.with_dist) + usize::from(request.with_hash) + usize::from(request.with_coord);
    out.array(points.len());
    for p in points {
        if options > 0 {
            out.array(options + 1);
        }
        out.bulk(&p.member);
        if request.with_dist {
            out.bulk(geohash::format_distance(p.dist).as_bytes());
        }
        if request.with_hash {
            out.integer(p.score as i64);
        }
        if request.with_coord {
            out.array(2);
            reply_coord(out, p.lon);
            reply_coord(out, p.lat);
        }
    }
}

/// GEORADIUS key longitude latitude radius M|KM|FT|MI [WITHCOORD] [WITHDIST] [WITHHASH]
/// [COUNT count [ANY]] [ASC|DESC] [STORE key] [STOREDIST key] — O(N+log(M)).
fn georadius(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::Radius { store: true })
}

/// GEORADIUS_RO key longitude latitude radius unit [options] — O(N+log(M)).
fn georadius_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::Radius { store: false })
}

/// GEORADIUSBYMEMBER key member radius unit [options] [STORE key] [STOREDIST key] —
/// O(N+log(M)).
fn georadiusbymember(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::ByMember { store: true })
}

/// GEORADIUSBYMEMBER_RO key member radius unit [options] — O(N+log(M)).
fn georadiusbymember_ro(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::ByMember { store: false })
}

/// GEOSEARCH key FROMMEMBER member|FROMLONLAT longitude latitude BYRADIUS radius unit|BYBOX
/// width height unit [ASC|DESC] [COUNT count [ANY]] [WITHCOORD] [WITHDIST] [WITHHASH] —
/// O(N+log(M)).
fn geosearch(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::Search)
}

/// GEOSEARCHSTORE destination source FROMMEMBER|FROMLONLAT ... BYRADIUS|BYBOX ... [ASC|DESC]
/// [COUNT count [ANY]] [STOREDIST] — O(N+log(M)).
fn geosearchstore(ctx: &mut Ctx<'_>, args: &[&[u8]], out: &mut dyn ReplySink) -> CmdResult {
    georadius_generic(ctx, args, out, Variant::SearchStore)
}

// ---------------------------------------------------------------------------------------
// Command table
// ---------------------------------------------------------------------------------------

fn unit_arg() -> ArgDoc {
    ArgDoc::one_of(
        "unit",
        vec![ArgDoc::token("m", "M"), ArgDoc::token("km", "KM"), ArgDoc::token("ft", "FT"), ArgDoc::token("mi", "MI")],
    )
}

fn order_arg() -> ArgDoc {
    ArgDoc::one_of("order", vec![ArgDoc::token("asc", "ASC"), ArgDoc::token("desc", "DESC")]).optional()
}

fn count_arg(any_since: bool) -> ArgDoc {
    let any = ArgDoc::token("any", "ANY").optional();
    let any = if any_since { any.since("6.2.0") } else { any };
    ArgDoc::block("count", vec![ArgDoc::new("count", ArgType::Integer).after("COUNT"), any]).optional()
}

fn with_args() -> [ArgDoc; 3] {
    [
        ArgDoc::token("withcoord", "WITHCOORD").optional(),
        ArgDoc::token("withdist", "WITHDIST").optional(),
        ArgDoc::token("withhash", "WITHHASH").optional(),
    ]
}

/// GEORADIUS-style arguments after the centre: radius, unit, options, and STORE/STOREDIST
/// for the writing forms.
fn radius_args(center: Vec<ArgDoc>, any_since: bool, store: bool) -> Vec<ArgDoc> {
    let mut args = vec![ArgDoc::key("key", 0)];
    args.extend(center);
    args.push(ArgDoc::new("radius", ArgType::Double));
    args.push(unit_arg());
    args.extend(with_args());
    args.push(count_arg(any_since));
    args.push(order_arg());
    if store {
        args.push(ArgDoc::key("key", 1).after("STORE").optional());
        args.push(ArgDoc::key("key", 2).after("STOREDIST").optional());
    }
    args
}

/// GEOSEARCH's FROM and BY arguments.
fn search_shape_args() -> [ArgDoc; 2] {
    [
        ArgDoc::one_of(
            "from",
            vec![
                ArgDoc::new("member", ArgType::String).after("FROMMEMBER"),
                ArgDoc::block(
                    "longitude_latitude",
                    vec![ArgDoc::new("longitude", ArgType::Double), ArgDoc::new("latitude", ArgType::Double)],
                )
                .after("FROMLONLAT"),
            ],
        ),
        ArgDoc::one_of(
            "by",
            vec![
                ArgDoc::block("circle", vec![ArgDoc::new("radius", ArgType::Double).after("BYRADIUS"), unit_arg()]),
                ArgDoc::block(
                    "box",
                    vec![
                        ArgDoc::new("width", ArgType::Double).after("BYBOX"),
                        ArgDoc::new("height", ArgType::Double),
                        unit_arg(),
                    ],
                ),
            ],
        ),
    ]
}

const RADIUS_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements inside the bounding box of the circular area delimited by center and radius and M is the number of items inside the index.";
const SEARCH_COMPLEXITY: &str = "O(N+log(M)) where N is the number of elements in the grid-aligned bounding box area around the shape provided as the filter and M is the number of items inside the shape";

pub fn register() -> Vec<CommandSpec> {
    let lonlat = || vec![ArgDoc::new("longitude", ArgType::Double), ArgDoc::new("latitude", ArgType::Double)];
    let member = || vec![ArgDoc::new("member", ArgType::String)];
    vec![
        CommandSpec::new("geoadd", -5, "write denyoom", "geo", geoadd)
            .doc(
                "geo",
                "3.2.0",
                "Add one or more geospatial items in the geospatial index represented using a sorted set",
                "O(log(N)) for each item added, where N is the number of elements in the sorted set.",
            )
            .history(&[("6.2.0", "Added the `CH`, `NX` and `XX` options.")])
            .keys("RW update", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::one_of("condition", vec![ArgDoc::token("nx", "NX"), ArgDoc::token("xx", "XX")])
                    .optional()
                    .since("6.2.0"),
                ArgDoc::token("change", "CH").optional().since("6.2.0"),
                ArgDoc::block(
                    "longitude_latitude_member",
                    vec![
                        ArgDoc::new("longitude", ArgType::Double),
                        ArgDoc::new("latitude", ArgType::Double),
                        ArgDoc::new("member", ArgType::String),
                    ],
                )
                .multiple(),
            ]),
        CommandSpec::new("geodist", -4, "readonly", "geo", geodist)
            .doc("geo", "3.2.0", "Returns the distance between two members of a geospatial index", "O(log(N))")
            .keys("RO access", 1, 0, 1)
            .args(vec![
                ArgDoc::key("key", 0),
                ArgDoc::new("member1", ArgType::String),
                ArgDoc::new("member2", ArgType::String),
                unit_arg().optional(),
            ]),
        CommandSpec::new("geohash", -2, "readonly", "geo", geohash_cmd)
            .doc(
                "geo",
                "3.2.0",
                "Returns members of a geospatial index as standard geohash strings",
                "O(log(N)) for each member requested, where N is the number of elements in the sorted set.",
            )
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("member", ArgType::String).multiple()]),
        CommandSpec::new("geopos", -2, "readonly", "geo", geopos)
            .doc(
                "geo",
                "3.2.0",
                "Returns longitude and latitude of members of a geospatial index",
                "O(N) where N is the number of members requested.",
            )
            .keys("RO access", 1, 0, 1)
            .args(vec![ArgDoc::key("key", 0), ArgDoc::new("member", ArgType::String).multiple()]),
        CommandSpec::new("georadius", -6, "write denyoom", "geo", georadius)
            .doc(
                "geo",
                "3.2.0",
                "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point",
                RADIUS_COMPLEXITY,
            )
            .history(&[
                ("6.2.0", "Added the `ANY` option for `COUNT`."),
                ("7.0.0", "Added support for uppercase unit names."),
            ])
            .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` argument")
            .keys("RO access", 1, 0, 1)
            .keys_keyword("OW update", "STORE", 6, 0, 1, 0)
            .keys_keyword("OW update", "STOREDIST", 6, 0, 1, 0)
            .args(radius_args(lonlat(), true, true)),
        CommandSpec::new("georadius_ro", -6, "readonly", "geo", georadius_ro)
            .doc("geo", "3.2.10", "A read-only variant for GEORADIUS", RADIUS_COMPLEXITY)
            .history(&[("6.2.0", "Added the `ANY` option for `COUNT`.")])
            .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` argument")
            .keys("RO access", 1, 0, 1)
            .args(radius_args(lonlat(), true, false)),
        CommandSpec::new("georadiusbymember", -5, "write denyoom", "geo", georadiusbymember)
            .doc(
                "geo",
                "3.2.0",
                "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member",
                RADIUS_COMPLEXITY,
            )
            .history(&[("7.0.0", "Added support for uppercase unit names.")])
            .deprecated("6.2.0", "`GEOSEARCH` and `GEOSEARCHSTORE` with the `BYRADIUS` and `FROMMEMBER` arguments")
            .keys("RO access", 1, 0, 1)
            .keys_keyword("OW update", "STORE", 5, 0, 1, 0)
            .keys_keyword("OW update", "STOREDIST", 5, 0, 1, 0)
            .args(radius_args(member(), false, true)),
        CommandSpec::new("georadiusbymember_ro", -5, "readonly", "geo", georadiusbymember_ro)
            .doc("geo", "3.2.10", "A read-only variant for GEORADIUSBYMEMBER", RADIUS_COMPLEXITY)
            .deprecated("6.2.0", "`GEOSEARCH` with the `BYRADIUS` and `FROMMEMBER` arguments")
            .keys("RO access", 1, 0, 1)
            .args(radius_args(member(), false, false)),
        CommandSpec::new("geosearch", -7, "readonly", "geo", geosearch)
            .doc(
                "geo",
                "6.2.0",
                "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.",
                SEARCH_COMPLEXITY,
            )
            .history(&[("7.0.0", "Added support for uppercase unit names.")])
            .keys("RO access", 1, 0, 1)
            .args({
                let mut args = vec![ArgDoc::key("key", 0)];
                args.extend(search_shape_args());
                args.push(order_arg());
                args.push(count_arg(false));
                args.extend(with_args());
                args
            }),
        CommandSpec::new("geosearchstore", -8, "write denyoom", "geo", geosearchstore)
            .doc(
                "geo",
                "6.2.0",
                "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.",
                SEARCH_COMPLEXITY,
            )
            .history(&[("7.0.0", "Added support for uppercase unit names.")])
            .keys("OW update", 1, 0, 1)
            .keys("RO access", 2, 0, 1)
            .args({
                let mut args = vec![ArgDoc::key("destination", 0), ArgDoc::key("source", 1)];
                args.extend(search_shape_args());
                args.push(order_arg());
                args.push(count_arg(false));
                args.push(ArgDoc::token("storedist", "STOREDIST").optional());
                args
            }),
    ]
}
