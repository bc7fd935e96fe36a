//! Geohash arithmetic for the GEO commands, with Redis's exact semantics (geohash.c and
//! geohash_helper.c): a position is a 52-bit interleaving of 26 latitude bits and 26
//! longitude bits, stored as a sorted-set score. Searches cover the query shape with the
//! geohash box of the centre plus its eight neighbours at a precision estimated from the
//! radius, then filter candidates by exact (haversine) distance.
//!
//! Every formula follows the C operation by operation, so scores, decoded coordinates and
//! distances are bit-identical to Redis's (the trigonometry comes from the same libm).

/// Bits per coordinate at full precision: 26 * 2 = 52 bits, exact in a double score.
pub const STEP_MAX: u8 = 26;

/// Limits from EPSG:900913 / EPSG:3785 / OSGEO:41001: no geocoding at the poles.
pub const LAT_MIN: f64 = -85.05112878;
pub const LAT_MAX: f64 = 85.05112878;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;

/// Earth's quadratic mean radius for WGS-84, in meters.
pub const EARTH_RADIUS_IN_METERS: f64 = 6372797.560856;
const MERCATOR_MAX: f64 = 20037726.37;
/// Degrees to radians, as Redis's `D_R` (`M_PI / 180.0`, rounded once).
const D_R: f64 = std::f64::consts::PI / 180.0;

/// A geohash of `step` bits per coordinate, interleaved (longitude in odd bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HashBits {
    pub bits: u64,
    pub step: u8,
}

impl HashBits {
    /// Redis's HASHISZERO / GISZERO: a neighbour excluded from the search.
    pub fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }

    /// The hash left-aligned to 52 bits (geohashAlign52Bits): the score prefix of its box.
    pub fn align52(self) -> u64 {
        self.bits << (52 - u32::from(self.step) * 2)
    }

    /// The score interval `[min, max)` holding every point inside this box.
    pub fn score_range(self) -> (u64, u64) {
        let next = HashBits { bits: self.bits.wrapping_add(1), step: self.step };
        (self.align52(), next.align52())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

impl Range {
    fn is_zero(self) -> bool {
        self.min == 0.0 && self.max == 0.0
    }
}

/// The longitude and latitude intervals a hash covers.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Area {
    pub hash: HashBits,
    pub longitude: Range,
    pub latitude: Range,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Neighbors {
    pub north: HashBits,
    pub east: HashBits,
    pub west: HashBits,
    pub south: HashBits,
    pub north_east: HashBits,
    pub south_east: HashBits,
    pub north_west: HashBits,
    pub south_west: HashBits,
}

/// The WGS-84 coordinate ranges Redis encodes positions in.
pub const WGS84_LONG: Range = Range { min: LONG_MIN, max: LONG_MAX };
pub const WGS84_LAT: Range = Range { min: LAT_MIN, max: LAT_MAX };

/// Interleaves the bits of `x` (even positions) and `y` (odd positions).
pub fn interleave64(xlo: u32, ylo: u32) -> u64 {
    const B: [u64; 5] =
        [0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F, 0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF];
    const S: [u32; 5] = [1, 2, 4, 8, 16];
    let mut x = u64::from(xlo);
    let mut y = u64::from(ylo);
    for i in (0..5).rev() {
        x = (x | (x << S[i])) & B[i];
        y = (y | (y << S[i])) & B[i];
    }
    x | (y << 1)
}

/// The inverse of `interleave64`: even bits in the low half, odd bits in the high half.
pub fn deinterleave64(interleaved: u64) -> u64 {
    const B: [u64; 6] = [
        0x5555555555555555,
        0x3333333333333333,
        0x0F0F0F0F0F0F0F0F,
        0x00FF00FF00FF00FF,
        0x0000FFFF0000FFFF,
        0x00000000FFFFFFFF,
    ];
    const S: [u32; 6] = [0, 1, 2, 4, 8, 16];
    let mut x = interleaved;
    let mut y = interleaved >> 1;
    for i in 0..6 {
        x = (x | (x >> S[i])) & B[i];
        y = (y | (y >> S[i])) & B[i];
    }
    x | (y << 32)
}

/// Encodes a position at `step` bits per coordinate within the given ranges. None outside
/// the WGS-84 limits or the ranges, or for a step outside 1..=32.
pub fn encode(long_range: Range, lat_range: Range, longitude: f64, latitude: f64, step: u8) -> Option<HashBits> {
    if step > 32 || step == 0 || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&longitude) || !(LAT_MIN..=LAT_MAX).contains(&latitude) {
        return None;
    }
    if latitude < lat_range.min || latitude > lat_range.max || longitude < long_range.min || longitude > long_range.max
    {
        return None;
    }
    let mut lat_offset = (latitude - lat_range.min) / (lat_range.max - lat_range.min);
    let mut long_offset = (longitude - long_range.min) / (long_range.max - long_range.min);
    let scale = (1u64 << step) as f64;
    lat_offset *= scale;
    long_offset *= scale;
    // C converts the offsets to uint32_t by truncation; at the upper limit the offset is
    // exactly 2^step, which spills one bit past the 52 (Redis keeps that quirk).
    Some(HashBits { bits: interleave64(lat_offset as u32, long_offset as u32), step })
}

/// Encodes a position in the WGS-84 ranges (GEOADD's score at `STEP_MAX`).
pub fn encode_wgs84(longitude: f64, latitude: f64, step: u8) -> Option<HashBits> {
    encode(WGS84_LONG, WGS84_LAT, longitude, latitude, step)
}

/// The area a hash covers within the given ranges.
pub fn decode(long_range: Range, lat_range: Range, hash: HashBits) -> Option<Area> {
    if hash.is_zero() || lat_range.is_zero() || long_range.is_zero() {
        return None;
    }
    let separated = deinterleave64(hash.bits);
    let lat_scale = lat_range.max - lat_range.min;
    let long_scale = long_range.max - long_range.min;
    let ilato = separated as u32;
    let ilono = (separated >> 32) as u32;
    let div = (1u64 << hash.step) as f64;
    Some(Area {
        hash,
        latitude: Range {
            min: lat_range.min + (f64::from(ilato) * 1.0 / div) * lat_scale,
            // `ilato + 1` is 32-bit unsigned arithmetic in C: it wraps to 0.
            max: lat_range.min + (f64::from(ilato.wrapping_add(1)) * 1.0 / div) * lat_scale,
        },
        longitude: Range {
            min: long_range.min + (f64::from(ilono) * 1.0 / div) * long_scale,
            max: long_range.min + (f64::from(ilono.wrapping_add(1)) * 1.0 / div) * long_scale,
        },
    })
}

/// The centre of an area, clamped to the WGS-84 limits: `[longitude, latitude]`.
pub fn area_center(area: &Area) -> [f64; 2] {
    let lon = ((area.longitude.min + area.longitude.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.latitude.min + area.latitude.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    [lon, lat]
}

/// The position a full-precision hash stands for, `[longitude, latitude]`.
pub fn decode_to_lon_lat(hash: HashBits) -> Option<[f64; 2]> {
    decode(WGS84_LONG, WGS84_LAT, hash).map(|a| area_center(&a))
}

/// The position a sorted-set score stands for (Redis's decodeGeohash). Never fails for a
/// real score: every score converts to some 64-bit pattern, as C's double-to-uint64 cast
/// does on x86-64 (which is what makes GEOPOS of an arbitrary ZADD score deterministic).
pub fn decode_score(score: f64) -> Option<[f64; 2]> {
    decode_to_lon_lat(HashBits { bits: score_to_bits(score), step: STEP_MAX })
}

/// `(uint64_t)score` as GCC compiles it for x86-64: values below 2^63 (negatives
/// included) go through a signed truncation, larger ones are offset by 2^63; anything
/// the signed conversion can't represent becomes 0x8000_0000_0000_0000 first.
pub fn score_to_bits(score: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    fn cvttsd2si(x: f64) -> u64 {
        if x.is_nan() || !(-TWO63..TWO63).contains(&x) {
            1 << 63
        } else {
            x as i64 as u64
        }
    }
    if score >= TWO63 {
        cvttsd2si(score - TWO63) ^ (1 << 63)
    } else {
        cvttsd2si(score)
    }
}

fn move_x(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let y = hash.bits & 0x5555555555555555;
    let zz = 0x5555555555555555u64 >> (64 - u32::from(hash.step) * 2);
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(hash.step) * 2);
    hash.bits = x | y;
}

fn move_y(hash: &mut HashBits, d: i8) {
    if d == 0 {
        return;
    }
    let x = hash.bits & 0xaaaaaaaaaaaaaaaa;
    let mut y = hash.bits & 0x5555555555555555;
    let zz = 0xaaaaaaaaaaaaaaaau64 >> (64 - u32::from(hash.step) * 2);
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555555555555555u64 >> (64 - u32::from(hash.step) * 2);
    hash.bits = x | y;
}

/// The eight boxes around `hash` at the same precision (wrapping around the ranges).
pub fn neighbors(hash: HashBits) -> Neighbors {
    let moved = |dx: i8, dy: i8| {
        let mut h = hash;
        move_x(&mut h, dx);
        move_y(&mut h, dy);
        h
    };
    Neighbors {
        east: moved(1, 0),
        west: moved(-1, 0),
        south: moved(0, -1),
        north: moved(0, 1),
        north_west: moved(-1, 1),
        north_east: moved(1, 1),
        south_east: moved(1, -1),
        south_west: moved(-1, -1),
    }
}

fn deg_rad(ang: f64) -> f64 {
    ang * D_R
}

fn rad_deg(ang: f64) -> f64 {
    ang / D_R
}

/// The precision (bits per coordinate) whose boxes, with their neighbours, cover a search
/// of `range_meters` around latitude `lat`.
pub fn estimate_steps_by_radius(range_meters: f64, lat: f64) -> u8 {
    if range_meters == 0.0 {
        return 26;
    }
    let mut range_meters = range_meters;
    let mut step: i32 = 1;
    while range_meters < MERCATOR_MAX {
        range_meters *= 2.0;
        step += 1;
    }
    step -= 2; // Make sure the range is included in most of the base cases.
               // Wider boxes towards the poles.
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

/// The shape of a search: a circle or an axis-aligned box around a centre.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ShapeKind {
    /// Radius in the query's unit.
    Circle { radius: f64 },
    /// Width and height in the query's unit.
    Rect { width: f64, height: f64 },
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    pub kind: ShapeKind,
    /// `[longitude, latitude]` of the centre.
    pub center: [f64; 2],
    /// Meters per unit of the query (km: 1000).
    pub conversion: f64,
}

impl Shape {
    /// The bounding box `[min_lon, min_lat, max_lon, max_lat]` (geohashBoundingBox). The
    /// longitude span is taken at the edge nearer the pole, where meridians are closest.
    pub fn bounding_box(&self) -> [f64; 4] {
        let [longitude, latitude] = self.center;
        let (height, width) = match self.kind {
            ShapeKind::Circle { radius } => (self.conversion * radius, self.conversion * radius),
            ShapeKind::Rect { width, height } => (self.conversion * (height / 2.0), self.conversion * (width / 2.0)),
        };
        let lat_delta = rad_deg(height / EARTH_RADIUS_IN_METERS);
        let long_delta_top = rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude + lat_delta).cos());
        let long_delta_bottom = rad_deg(width / EARTH_RADIUS_IN_METERS / deg_rad(latitude - lat_delta).cos());
        let southern = latitude < 0.0;
        let long_delta = if southern { long_delta_bottom } else { long_delta_top };
        [longitude - long_delta, latitude - lat_delta, longitude + long_delta, latitude + lat_delta]
    }

    /// Whether the point `[lon, lat]` lies inside the shape, and its distance from the
    /// centre in meters if so (geoWithinShape after decoding).
    pub fn contains(&self, point: [f64; 2]) -> Option<f64> {
        let [x1, y1] = self.center;
        let [x2, y2] = point;
        match self.kind {
            ShapeKind::Circle { radius } => {
                let distance = distance(x1, y1, x2, y2);
                (distance <= radius * self.conversion).then_some(distance)
            }
            ShapeKind::Rect { width, height } => {
                distance_if_in_rectangle(width * self.conversion, height * self.conversion, x1, y1, x2, y2)
            }
        }
    }
}

/// The centre box and its neighbours to scan for a search (GeoHashRadius).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SearchAreas {
    pub hash: HashBits,
    pub area: Area,
    pub neighbors: Neighbors,
}

impl SearchAreas {
    /// The nine boxes in Redis's scan order: centre, N, S, E, W, NE, NW, SE, SW. Excluded
    /// neighbours are zero hashes.
    pub fn boxes(&self) -> [HashBits; 9] {
        let n = &self.neighbors;
        [self.hash, n.north, n.south, n.east, n.west, n.north_east, n.north_west, n.south_east, n.south_west]
    }
}

/// The boxes covering `shape` (geohashCalculateAreasByShapeWGS84): the centre's box at an
/// estimated precision (one step coarser if a neighbour would not reach the bounding box
/// edge), with the neighbours that lie wholly outside the bounding box left out.
pub fn areas_for_shape(shape: &Shape) -> SearchAreas {
    let [min_lon, min_lat, max_lon, max_lat] = shape.bounding_box();
    let [longitude, latitude] = shape.center;
    let radius_meters = match shape.kind {
        ShapeKind::Circle { radius } => radius,
        ShapeKind::Rect { width, height } => ((width / 2.0) * (width / 2.0) + (height / 2.0) * (height / 2.0)).sqrt(),
    } * shape.conversion;

    let mut steps = estimate_steps_by_radius(radius_meters, latitude);
    let at = |steps: u8| {
        let hash = encode(WGS84_LONG, WGS84_LAT, longitude, latitude, steps).unwrap_or_default();
        let area = decode(WGS84_LONG, WGS84_LAT, hash).unwrap_or_default();
        (hash, neighbors(hash), area)
    };
    let (mut hash, mut nb, mut area) = at(steps);

    // Near the edge of the covered area the estimated step may be too fine: one of the
    // N/S/E/W boxes would not reach the edge of the search bounding box.
    let reach = |h: HashBits| decode(WGS84_LONG, WGS84_LAT, h).unwrap_or_default();
    let decrease_step = reach(nb.north).latitude.max < max_lat
        || reach(nb.south).latitude.min > min_lat
        || reach(nb.east).longitude.max < max_lon
        || reach(nb.west).longitude.min > min_lon;
    if steps > 1 && decrease_step {
        steps -= 1;
        (hash, nb, area) = at(steps);
    }

    // Exclude the boxes that can't hold a match.
    if steps >= 2 {
        let zero = HashBits::default();
        if area.latitude.min < min_lat {
            (nb.south, nb.south_west, nb.south_east) = (zero, zero, zero);
        }
        if area.latitude.max > max_lat {
            (nb.north, nb.north_east, nb.north_west) = (zero, zero, zero);
        }
        if area.longitude.min < min_lon {
            (nb.west, nb.south_west, nb.north_west) = (zero, zero, zero);
        }
        if area.longitude.max > max_lon {
            (nb.east, nb.south_east, nb.north_east) = (zero, zero, zero);
        }
    }
    SearchAreas { hash, area, neighbors: nb }
}

/// Distance along a meridian between two latitudes, in meters.
pub fn lat_distance(lat1d: f64, lat2d: f64) -> f64 {
    EARTH_RADIUS_IN_METERS * (deg_rad(lat2d) - deg_rad(lat1d)).abs()
}

/// Great-circle (haversine) distance in meters between two `(lon, lat)` positions.
pub fn distance(lon1d: f64, lat1d: f64, lon2d: f64, lat2d: f64) -> f64 {
    let lon1r = deg_rad(lon1d);
    let lon2r = deg_rad(lon2d);
    let v = ((lon2r - lon1r) / 2.0).sin();
    // Same meridian: the haversine reduces to the latitude difference.
    if v == 0.0 {
        return lat_distance(lat1d, lat2d);
    }
    let lat1r = deg_rad(lat1d);
    let lat2r = deg_rad(lat2d);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_IN_METERS * a.sqrt().asin()
}

/// Whether `(x2, y2)` lies in the `width_m` x `height_m` box centred on `(x1, y1)`, and
/// its distance from the centre if so. The east-west extent is measured along the
/// point's own parallel.
pub fn distance_if_in_rectangle(width_m: f64, height_m: f64, x1: f64, y1: f64, x2: f64, y2: f64) -> Option<f64> {
    if lat_distance(y2, y1) > height_m / 2.0 {
        return None;
    }
    if distance(x2, y2, x1, y2) > width_m / 2.0 {
        return None;
    }
    Some(distance(x1, y1, x2, y2))
}

/// The standard 11-character base-32 geohash of a stored score (GEOHASH): decoded, then
/// re-encoded in the standard [-90, 90] latitude range; the 11th character is always '0'.
pub fn standard_geohash(score: f64) -> Option<[u8; 11]> {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let [lon, lat] = decode_score(score)?;
    let hash = encode(Range { min: -180.0, max: 180.0 }, Range { min: -90.0, max: 90.0 }, lon, lat, 26)
        .unwrap_or(HashBits { bits: 0, step: 26 });
    let mut out = [b'0'; 11];
    for (i, c) in out.iter_mut().enumerate().take(10) {
        let idx = (hash.bits >> (52 - (i + 1) * 5)) & 0x1f;
        *c = ALPHABET[idx as usize];
    }
    Some(out)
}

/// Redis's `fixedpoint_d2string(d, 4)`: a distance with exactly four decimals, rounded
/// half to even on the scaled value as `llrint` does.
pub fn format_distance(d: f64) -> String {
    if d == 0.0 {
        return "0.0000".into();
    }
    let scaled = (d * 10000.0).round_ties_even();
    // llrint of an out-of-range value is unspecified in C; x86-64 gives i64::MIN.
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    let svalue = if scaled.is_nan() || !(-TWO63..TWO63).contains(&scaled) { i64::MIN } else { scaled as i64 };
    let negative = svalue < 0;
    let digits = svalue.unsigned_abs().to_string();
    let (int_part, frac_part) =
        if digits.len() > 4 { digits.split_at(digits.len() - 4) } else { ("0", digits.as_str()) };
    format!("{}{}.{:0>4}", if negative { "-" } else { "" }, int_part, frac_part)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn score(lon: f64, lat: f64) -> u64 {
        encode_wgs84(lon, lat, STEP_MAX).unwrap().align52()
    }

    fn human(x: f64) -> String {
        crate::longdouble::LongDouble::from_f64(x).to_human_string().unwrap()
    }

    // Expected values below come from redis-server 7.0.15 (GEOADD, ZSCORE, GEOPOS,
    // GEOHASH, GEODIST).
    #[test]
    fn scores_match_redis() {
        assert_eq!(score(13.361389, 38.115556), 3479099956230698);
        assert_eq!(score(15.087269, 37.502669), 3479447370796909);
        assert_eq!(score(0.0, 0.0), 3377699720527872);
        assert_eq!(score(-180.0, -85.05112878), 0);
        // The upper limits spill past 52 bits, as in Redis.
        assert_eq!(score(180.0, 85.05112878), 13510798882111488);
        assert!(encode_wgs84(180.1, 0.0, 26).is_none());
        assert!(encode_wgs84(0.0, 85.06, 26).is_none());
    }

    #[test]
    fn positions_match_redis() {
        let [lon, lat] = decode_score(3479099956230698.0).unwrap();
        assert_eq!((human(lon).as_str(), human(lat).as_str()), ("13.36138933897018433", "38.11555639549629859"));
        let [lon, lat] = decode_score(0.0).unwrap();
        assert_eq!((human(lon).as_str(), human(lat).as_str()), ("-179.99999731779098511", "-85.05112751263942528"));
        let [lon, lat] = decode_score(13510798882111488.0).unwrap();
        assert_eq!((human(lon).as_str(), human(lat).as_str()), ("180", "85.0511287799999991"));
        let [lon, lat] = decode_score(3377699720527872.0).unwrap();
        assert_eq!((human(lon).as_str(), human(lat).as_str()), ("0.00000268220901489", "0.00000126736058093"));
    }

    #[test]
    fn odd_scores_decode_like_the_c_cast() {
        // ZADD g -1 neg / 1e300 big / inf / -inf, then GEOPOS.
        assert_eq!(decode_score(-1.0).unwrap(), [180.0, 85.05112878]);
        assert_eq!(decode_score(1e300).unwrap(), decode_score(0.0).unwrap());
        assert_eq!(decode_score(f64::INFINITY).unwrap(), decode_score(0.0).unwrap());
        let [lon, lat] = decode_score(f64::NEG_INFINITY).unwrap();
        assert_eq!((human(lon).as_str(), human(lat).as_str()), ("180", "-85.05112751263942528"));
    }

    #[test]
    fn geohash_strings_match_redis() {
        let s = |x: f64| String::from_utf8(standard_geohash(x).unwrap().to_vec()).unwrap();
        assert_eq!(s(3479099956230698.0), "sqc8b49rny0");
        assert_eq!(s(3479447370796909.0), "sqdtr74hyu0");
        assert_eq!(s(13510798882111488.0), "bp05b5048p0");
        assert_eq!(s(0.0), "00bh0hbj200");
        assert_eq!(s(3377699720527872.0), "s0000000000");
    }

    #[test]
    fn distances_match_redis() {
        let [x1, y1] = decode_score(3479099956230698.0).unwrap();
        let [x2, y2] = decode_score(3479447370796909.0).unwrap();
        let d = distance(x1, y1, x2, y2);
        assert_eq!(format_distance(d), "166274.1516");
        assert_eq!(format_distance(d / 1000.0), "166.2742");
        assert_eq!(format_distance(0.0), "0.0000");
        assert_eq!(format_distance(0.00004), "0.0000");
        assert_eq!(format_distance(0.00005), "0.0000");
        assert_eq!(format_distance(0.00015), "0.0001");
        assert_eq!(format_distance(0.00025), "0.0002");
        assert_eq!(format_distance(1.23455), "1.2346");
        assert_eq!(format_distance(1.5), "1.5000");
    }

    #[test]
    fn interleave_round_trips() {
        for (x, y) in [(0u32, 0u32), (1, 0), (0, 1), (0xdead_beef, 0x1234_5678), (u32::MAX, u32::MAX)] {
            let i = interleave64(x, y);
            assert_eq!(deinterleave64(i), u64::from(x) | (u64::from(y) << 32));
        }
    }

    #[test]
    fn neighbours_are_adjacent() {
        let h = encode_wgs84(10.0, 10.0, 10).unwrap();
        let n = neighbors(h);
        let a = decode(WGS84_LONG, WGS84_LAT, h).unwrap();
        let east = decode(WGS84_LONG, WGS84_LAT, n.east).unwrap();
        let north = decode(WGS84_LONG, WGS84_LAT, n.north).unwrap();
        assert_eq!(east.longitude.min, a.longitude.max);
        assert_eq!(east.latitude, a.latitude);
        assert_eq!(north.latitude.min, a.latitude.max);
        assert_eq!(north.longitude, a.longitude);
    }

    #[test]
    fn step_estimates() {
        assert_eq!(estimate_steps_by_radius(0.0, 0.0), 26);
        assert_eq!(estimate_steps_by_radius(1.0, 0.0), 24);
        assert_eq!(estimate_steps_by_radius(1000.0, 0.0), 14);
        assert_eq!(estimate_steps_by_radius(1000.0, 70.0), 13);
        assert_eq!(estimate_steps_by_radius(1000.0, -85.0), 12);
        assert_eq!(estimate_steps_by_radius(5e7, 0.0), 1);
    }
}
