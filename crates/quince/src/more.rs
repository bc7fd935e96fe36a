//! Typed geo, HyperLogLog and bitmap commands.

use crate::{Db, Result};

/// GEOSEARCH's units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GeoUnit {
    Meters,
    Kilometers,
    Miles,
    Feet,
}

impl GeoUnit {
    fn name(self) -> &'static [u8] {
        match self {
            GeoUnit::Meters => b"m",
            GeoUnit::Kilometers => b"km",
            GeoUnit::Miles => b"mi",
            GeoUnit::Feet => b"ft",
        }
    }
}

impl Db {
    // ---- geo ----------------------------------------------------------------------

    /// GEOADD: how many members were new. Each member is (longitude, latitude, name).
    pub fn geoadd<M: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, members: &[(f64, f64, M)]) -> Result<usize> {
        let coords: Vec<(String, String)> =
            members.iter().map(|(lon, lat, _)| (lon.to_string(), lat.to_string())).collect();
        let mut args: Vec<&[u8]> = vec![b"GEOADD", key.as_ref()];
        for ((_, _, m), (lon, lat)) in members.iter().zip(&coords) {
            args.push(lon.as_bytes());
            args.push(lat.as_bytes());
            args.push(m.as_ref());
        }
        self.call(&args)
    }

    /// GEOPOS of one member: (longitude, latitude), None if absent.
    pub fn geopos(&self, key: impl AsRef<[u8]>, member: impl AsRef<[u8]>) -> Result<Option<(f64, f64)>> {
        let mut positions: Vec<Option<(f64, f64)>> = self.call(&[b"GEOPOS", key.as_ref(), member.as_ref()])?;
        Ok(positions.pop().flatten())
    }

    /// GEODIST between two members, None if one is absent.
    pub fn geodist(
        &self,
        key: impl AsRef<[u8]>,
        a: impl AsRef<[u8]>,
        b: impl AsRef<[u8]>,
        unit: GeoUnit,
    ) -> Result<Option<f64>> {
        self.call(&[b"GEODIST", key.as_ref(), a.as_ref(), b.as_ref(), unit.name()])
    }

    /// GEOSEARCH FROMLONLAT BYRADIUS ASC WITHDIST: members within `radius` of a point,
    /// nearest first, with their distances.
    pub fn geosearch_radius(
        &self,
        key: impl AsRef<[u8]>,
        longitude: f64,
        latitude: f64,
        radius: f64,
        unit: GeoUnit,
    ) -> Result<Vec<(Vec<u8>, f64)>> {
        let (lon, lat, r) = (longitude.to_string(), latitude.to_string(), radius.to_string());
        let args: [&[u8]; 10] = [
            b"GEOSEARCH",
            key.as_ref(),
            b"FROMLONLAT",
            lon.as_bytes(),
            lat.as_bytes(),
            b"BYRADIUS",
            r.as_bytes(),
            unit.name(),
            b"ASC",
            b"WITHDIST",
        ];
        self.call(&args)
    }

    // ---- HyperLogLog --------------------------------------------------------------

    /// PFADD: whether the estimate changed.
    pub fn pfadd<E: AsRef<[u8]>>(&self, key: impl AsRef<[u8]>, elements: &[E]) -> Result<bool> {
        let mut args: Vec<&[u8]> = vec![b"PFADD", key.as_ref()];
        args.extend(elements.iter().map(|e| e.as_ref()));
        self.call(&args)
    }

    /// PFCOUNT of the union of the keys.
    pub fn pfcount<K: AsRef<[u8]>>(&self, keys: &[K]) -> Result<u64> {
        let mut args: Vec<&[u8]> = vec![b"PFCOUNT"];
        args.extend(keys.iter().map(|k| k.as_ref()));
        self.call(&args)
    }

    pub fn pfmerge<K: AsRef<[u8]>>(&self, destination: impl AsRef<[u8]>, sources: &[K]) -> Result<()> {
        let mut args: Vec<&[u8]> = vec![b"PFMERGE", destination.as_ref()];
        args.extend(sources.iter().map(|k| k.as_ref()));
        self.call(&args)
    }

    // ---- bitmaps ------------------------------------------------------------------

    /// SETBIT: the bit's old value.
    pub fn setbit(&self, key: impl AsRef<[u8]>, offset: u64, on: bool) -> Result<bool> {
        self.call(&[b"SETBIT", key.as_ref(), offset.to_string().as_bytes(), if on { b"1" } else { b"0" }])
    }

    pub fn getbit(&self, key: impl AsRef<[u8]>, offset: u64) -> Result<bool> {
        self.call(&[b"GETBIT", key.as_ref(), offset.to_string().as_bytes()])
    }

    /// BITCOUNT of the whole string.
    pub fn bitcount(&self, key: impl AsRef<[u8]>) -> Result<u64> {
        self.call(&[b"BITCOUNT", key.as_ref()])
    }

    /// BITPOS: the first bit set to `bit`, None when there is none (-1).
    pub fn bitpos(&self, key: impl AsRef<[u8]>, bit: bool) -> Result<Option<u64>> {
        let n: i64 = self.call(&[b"BITPOS", key.as_ref(), if bit { b"1" } else { b"0" }])?;
        Ok(u64::try_from(n).ok())
    }
}
