//! The RDB format, version 10 (Redis 7.0).
