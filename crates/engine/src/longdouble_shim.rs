//! TEMPORARY f64 stand-in until longdouble.rs lands.
#![allow(clippy::should_implement_trait)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongDouble(f64);
impl LongDouble {
    pub fn parse(s: &[u8]) -> Option<LongDouble> {
        std::str::from_utf8(s).ok()?.parse().ok().map(LongDouble)
    }
    pub fn from_i64(n: i64) -> LongDouble {
        LongDouble(n as f64)
    }
    pub fn add(self, o: LongDouble) -> LongDouble {
        LongDouble(self.0 + o.0)
    }
    pub fn is_nan(self) -> bool {
        self.0.is_nan()
    }
    pub fn is_infinite(self) -> bool {
        self.0.is_infinite()
    }
    pub fn to_human_string(self) -> Option<String> {
        let s = format!("{:.17}", self.0);
        Some(s.trim_end_matches('0').trim_end_matches('.').to_string())
    }
}
