//! Attempts counted across every process of the service, in the database: failed sign-ins and public booking
//! requests. The database rather than Redis: a sign-in reads the operator from it anyway, a booking writes to it,
//! and a count kept there holds across processes and restarts without a second thing to keep running (the request
//! limits of [`crate::app::rate_limit`] serve on from memory when Redis fails; a password guesser must not).
//!
//! Counts are kept per bucket: the SHA-256 of what is counted (no e-mail address or client address is stored in
//! the clear), and each count ends on its own ([`crate::store::attempts`]).
//!
//! # Sign-in
//!
//! Every way to sign in (`POST /api/auth/login`, the dashboard's `/sign-in`, the assistant endpoint's `/oauth/authorize`)
//! goes through [`begin_sign_in`] before the password is checked. An attempt is counted when it starts, as a
//! failure until it succeeds, so that a burst of parallel guesses is counted as it arrives, not after each hash.
//! Three counts, each allowing some failures and then asking for a growing wait (1 s, 2 s, 4 s, … up to
//! [`LONGEST_WAIT`]) since the last one:
//!
//! * per account and client address ([`FREE_PER_ACCOUNT_AND_ADDRESS`]): one guesser, one account;
//! * per client address ([`FREE_PER_ADDRESS`]): one guesser trying many accounts;
//! * per account ([`FREE_PER_ACCOUNT`]): many addresses guessing one account. So that guessing cannot lock the
//!   real operator out, this count is not asked of an address with no failure of its own: the operator signs in
//!   from their usual address while the account is under attack from elsewhere.
//!
//! A refused attempt writes nothing: the counts are read first, and only an attempt let through takes the write lock
//! to count itself (where the counts are read again, locked). So a flood of refused sign-ins costs reads, not
//! writes that other organizations' writes would queue behind.
//!
//! A count is forgotten [`SIGN_IN_WINDOW`] after its last failure. Accounts are counted by the e-mail typed
//! (trimmed, lower case), whether or not an operator has it, so that an unknown account answers exactly like a
//! known one. A correct password clears the count of its account and address and takes its own attempt back from
//! the other two.
//!
//! # Public booking requests
//!
//! [`lock_booking_counts`] and [`BookingCounts::count`] count a request made without an API key allowed to write
//! reservations, per hotel and client address and per hotel and guest e-mail, in fixed windows of
//! [`BOOKING_WINDOW`], inside the booking's own transaction (a request that fails is not counted).
//!
//! # Client addresses
//!
//! Every count of a client address counts its network as [`counted_address`] gives it: an IPv4 address alone, an
//! IPv6 address by its /64, the smallest network one subscriber is given (RFC 6177), in which they may choose any
//! of 2^64 addresses.

use std::net::{IpAddr, Ipv6Addr};

use chrono::{DateTime, TimeDelta, Utc};

use super::{now, secrets, Error, Result};
use crate::domain::change::{Change, Writer};
use crate::store::{attempts as rows, Db};

/// Failed sign-ins of one account from one address before each further attempt must wait.
pub const FREE_PER_ACCOUNT_AND_ADDRESS: i64 = 5;
/// Failed sign-ins from one address (any accounts) before each further attempt must wait.
pub const FREE_PER_ADDRESS: i64 = 20;
/// Failed sign-ins of one account (any addresses) before each further attempt from an address with failures of its
/// own must wait.
pub const FREE_PER_ACCOUNT: i64 = 10;
/// The longest wait between two attempts.
pub const LONGEST_WAIT: TimeDelta = TimeDelta::minutes(15);
/// How long after its last failure a count is kept.
pub const SIGN_IN_WINDOW: TimeDelta = TimeDelta::hours(1);
/// The window of the booking request limits.
pub const BOOKING_WINDOW: TimeDelta = TimeDelta::hours(1);

/// The wait before the next attempt after `failures` failures of a count that allows `free` of them: none, then
/// 1 s for the first failure past the free ones, doubling with each, at most [`LONGEST_WAIT`].
pub fn wait_after(failures: i64, free: i64) -> TimeDelta {
    if failures < free {
        return TimeDelta::zero();
    }
    let doublings = u32::try_from(failures - free).unwrap_or(u32::MAX).min(20);
    TimeDelta::seconds(1i64 << doublings).min(LONGEST_WAIT)
}

/// What is counted of a client address: an IPv4 address as it is, an IPv6 address by its /64 (an IPv4 address
/// mapped into IPv6 as the IPv4 address). Text that is not an address (`unknown`) is counted as it is.
pub fn counted_address(address: &str) -> String {
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V6(v6)) => match v6.to_ipv4_mapped() {
            Some(v4) => v4.to_string(),
            None => {
                let s = v6.segments();
                format!("{}/64", Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
        Ok(ip) => ip.to_string(),
        Err(_) => address.to_string(),
    }
}

/// The bucket of what is counted: its parts, digested.
fn bucket(parts: &[&str]) -> String {
    secrets::digest(&parts.join("\u{0}"))
}

/// The account a sign-in names: the e-mail as typed, trimmed and in lower case.
fn account(email: &str) -> String {
    email.trim().to_lowercase()
}

/// The three counts of a sign-in attempt, in the order they are locked (always the same, so that concurrent
/// attempts never wait on each other in a cycle).
struct SignInBuckets {
    pair: String,
    address: String,
    account: String,
}

impl SignInBuckets {
    fn of(email: &str, address: &str) -> SignInBuckets {
        let account = account(email);
        let address = counted_address(address);
        let address = address.as_str();
        SignInBuckets {
            pair: bucket(&["sign-in", "account+address", &account, address]),
            address: bucket(&["sign-in", "address", address]),
            account: bucket(&["sign-in", "account", &account]),
        }
    }
}

/// A sign-in attempt let through and counted as a failure; [`SignInAttempt::succeeded`] takes it back,
/// [`SignInAttempt::failed`] starts the wait for the next.
#[must_use = "a sign-in must say how it ended"]
pub struct SignInAttempt {
    buckets: SignInBuckets,
    /// Who signs in: someone at the client address, until the password says who.
    visitor: Writer,
}

/// When the last of `counts` allows another attempt after `at`: `None` when one may be made now.
fn wait_until(counts: &[(&Option<rows::Count>, i64)], at: DateTime<Utc>) -> Option<DateTime<Utc>> {
    counts
        .iter()
        .filter_map(|(count, free)| count.as_ref().map(|c| c.last_at + wait_after(c.count, *free)))
        .filter(|until| *until > at)
        .max()
}

/// A refusal that asks to wait until `until`.
fn too_many(message: &str, until: DateTime<Utc>, at: DateTime<Utc>) -> Error {
    let secs = (until - at).num_milliseconds().max(1).saturating_add(999) / 1000;
    Error::TooManyAttempts { message: format!("{message}; try again in {secs} s"), retry_after_secs: secs as u64 }
}

/// Counts a sign-in attempt of `email` from `address` before its password is checked, or refuses it
/// ([`Error::TooManyAttempts`], with the wait) while one of its counts asks to wait.
pub async fn begin_sign_in(db: &Db, email: &str, address: &str) -> Result<SignInAttempt> {
    let buckets = SignInBuckets::of(email, address);
    let at = now();
    // Read first: a refused attempt ends here, without the write lock (the module's documentation).
    {
        let mut conn = db.read().await?;
        let pair = rows::peek(&mut conn, &buckets.pair, at).await?;
        let from_address = rows::peek(&mut conn, &buckets.address, at).await?;
        let of_account = rows::peek(&mut conn, &buckets.account, at).await?;
        refuse_while_waiting(&pair, &from_address, &of_account, at)?;
    }
    let visitor = Writer::Visitor { address: address.to_string() };
    let mut tx = Change::begin_as(db, visitor.clone()).await?;
    let pair = rows::lock(tx.conn(), &buckets.pair, at).await?;
    let from_address = rows::lock(tx.conn(), &buckets.address, at).await?;
    let of_account = rows::lock(tx.conn(), &buckets.account, at).await?;
    refuse_while_waiting(&pair, &from_address, &of_account, at)?;
    for (bucket, count) in [(&buckets.pair, pair), (&buckets.address, from_address), (&buckets.account, of_account)] {
        let failures = count.map_or(0, |c| c.count) + 1;
        rows::put(tx.conn(), bucket, &rows::Count { count: failures, last_at: at, expires_at: at + SIGN_IN_WINDOW })
            .await?;
    }
    rows::purge(tx.conn(), at).await?;
    tx.commit().await?;
    Ok(SignInAttempt { buckets, visitor })
}

/// Refuses an attempt while one of its counts asks to wait.
fn refuse_while_waiting(
    pair: &Option<rows::Count>,
    from_address: &Option<rows::Count>,
    of_account: &Option<rows::Count>,
    at: DateTime<Utc>,
) -> Result<()> {
    // The account's count is asked only of addresses that failed before (see the module's documentation).
    let account_rule = if from_address.is_some() { FREE_PER_ACCOUNT } else { i64::MAX };
    let counts = [(pair, FREE_PER_ACCOUNT_AND_ADDRESS), (from_address, FREE_PER_ADDRESS), (of_account, account_rule)];
    match wait_until(&counts, at) {
        Some(until) => {
            crate::metrics::rate_limit_refused(crate::metrics::LimitKind::SignIn);
            Err(too_many("too many failed sign-ins", until, at))
        }
        None => Ok(()),
    }
}

impl SignInAttempt {
    /// The password was wrong: the wait before the next attempt runs from now, when the answer goes out, rather
    /// than from when the attempt came in (checking a password takes a while).
    pub async fn failed(self, db: &Db) -> Result<()> {
        let at = now();
        let mut tx = Change::begin_as(db, self.visitor).await?;
        for bucket in [&self.buckets.pair, &self.buckets.address, &self.buckets.account] {
            rows::touch(tx.conn(), bucket, at, at + SIGN_IN_WINDOW).await?;
        }
        tx.commit().await?;
        Ok(())
    }

    /// The password was right: the account's count from this address is cleared, and this attempt is taken back
    /// from the address's and the account's counts (the failures of others stay).
    pub async fn succeeded(self, db: &Db) -> Result<()> {
        let at = now();
        let mut tx = Change::begin_as(db, self.visitor).await?;
        rows::delete(tx.conn(), &self.buckets.pair).await?;
        for bucket in [&self.buckets.address, &self.buckets.account] {
            match rows::lock(tx.conn(), bucket, at).await? {
                Some(count) if count.count > 1 => {
                    rows::put(tx.conn(), bucket, &rows::Count { count: count.count - 1, ..count }).await?
                }
                _ => rows::delete(tx.conn(), bucket).await?,
            }
        }
        tx.commit().await?;
        Ok(())
    }
}

pub use crate::model::limits::BookingLimits;

/// The counts of a public booking request (per hotel and client address, per hotel and guest e-mail), locked for
/// the rest of the booking's transaction: concurrent requests from one address or for one e-mail take turns, so that
/// the later one sees what the earlier did (its request, which an exact repeat answers; its count).
pub struct BookingCounts {
    at: DateTime<Utc>,
    address: (String, Option<rows::Count>),
    email: (String, Option<rows::Count>),
}

/// Locks the counts of a public booking request for `hotel_id` from `address` for the guest `email`.
pub async fn lock_booking_counts(tx: &mut Change, hotel_id: &str, address: &str, email: &str) -> Result<BookingCounts> {
    let at = now();
    let address = bucket(&["booking", "address", hotel_id, &counted_address(address)]);
    let email = bucket(&["booking", "email", hotel_id, &account(email)]);
    let address_count = rows::lock(tx.conn(), &address, at).await?;
    let email_count = rows::lock(tx.conn(), &email, at).await?;
    Ok(BookingCounts { at, address: (address, address_count), email: (email, email_count) })
}

impl BookingCounts {
    /// Counts the request, or refuses it ([`Error::TooManyAttempts`]) when the address's or the e-mail's count for
    /// the hotel is spent (a limit of 0 counts nothing).
    pub async fn count(self, tx: &mut Change, limits: BookingLimits) -> Result<()> {
        let at = self.at;
        let mut next = Vec::new();
        for ((bucket, count), limit) in [(self.address, limits.per_address), (self.email, limits.per_email)] {
            if limit == 0 {
                continue;
            }
            let count = match count {
                Some(count) if count.count >= i64::from(limit) => {
                    crate::metrics::rate_limit_refused(crate::metrics::LimitKind::Public);
                    return Err(too_many("too many booking requests for this hotel", count.expires_at, at));
                }
                Some(count) => rows::Count { count: count.count + 1, last_at: at, ..count },
                None => rows::Count { count: 1, last_at: at, expires_at: at + BOOKING_WINDOW },
            };
            next.push((bucket, count));
        }
        for (bucket, count) in next {
            rows::put(tx.conn(), &bucket, &count).await?;
        }
        rows::purge(tx.conn(), at).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_grow_past_the_free_attempts_and_stop_at_the_longest() {
        assert_eq!(wait_after(0, 5), TimeDelta::zero());
        assert_eq!(wait_after(4, 5), TimeDelta::zero());
        assert_eq!(wait_after(5, 5), TimeDelta::seconds(1));
        assert_eq!(wait_after(6, 5), TimeDelta::seconds(2));
        assert_eq!(wait_after(8, 5), TimeDelta::seconds(8));
        assert_eq!(wait_after(15, 5), LONGEST_WAIT);
        assert_eq!(wait_after(10_000, 5), LONGEST_WAIT);
        assert_eq!(wait_after(i64::MAX, 0), LONGEST_WAIT);
        assert_eq!(wait_after(3, i64::MAX), TimeDelta::zero());
    }

    #[test]
    fn ipv6_addresses_count_by_their_64() {
        assert_eq!(counted_address("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(counted_address("2001:db8:1:2:bbbb:cccc:dddd:eeee"), "2001:db8:1:2::/64");
        assert_ne!(counted_address("2001:db8:1:3::1"), counted_address("2001:db8:1:2::1"));
        assert_eq!(counted_address("::ffff:203.0.113.7"), "203.0.113.7");
        assert_eq!(counted_address("203.0.113.7"), "203.0.113.7");
        assert_eq!(counted_address("unknown"), "unknown");
    }

    #[test]
    fn buckets_keep_what_they_count_apart() {
        let a = SignInBuckets::of(" Ana@Example.com ", "203.0.113.1");
        let b = SignInBuckets::of("ana@example.com", "203.0.113.2");
        assert_eq!(a.account, b.account, "the account is the e-mail, trimmed and in lower case");
        assert_ne!(a.pair, b.pair);
        assert_ne!(a.address, b.address);
        assert!(![&a.account, &a.address].contains(&&a.pair));
    }
}
