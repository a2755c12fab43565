//! What an operator runs beside the service: backups and restores of the SQLite database ([`backup`]), the
//! pre-flight report of `frontdesk check` ([`check`]) and the organization export ([`export`]). The commands
//! themselves are in `cli.rs`; the SQL these need is in `store::maintenance`.

pub mod backup;
pub mod check;
pub mod export;
