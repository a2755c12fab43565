//! Short reservation references: what a guest reads out on the phone and the desk types into its search.
//!
//! Eight characters from an alphabet without look-alikes (no 0/O, 1/I/L, U/V is kept apart by dropping U), drawn at
//! random and unique within the organization: 30^8 (about 6.6 x 10^11) codes, so a draw collides with an existing one
//! about once in 650,000 at a million reservations, and then it is drawn again.

use rand::Rng;

use crate::domain::change::{Change, Job, Writer};
use crate::store::{self, Db};

/// The characters of a reference: digits 2-9 and the capital letters without I, L, O and U.
pub const ALPHABET: &[u8; 30] = b"23456789ABCDEFGHJKMNPQRSTVWXYZ";
pub const LENGTH: usize = 8;

/// A new random reference (not yet checked for uniqueness).
pub fn draw() -> String {
    let mut rng = rand::thread_rng();
    (0..LENGTH).map(|_| char::from(ALPHABET[rng.gen_range(0..ALPHABET.len())])).collect()
}

/// Gives each reservation written before references existed (migration 0014) a reference of its own, in batches of
/// their own transactions. A database with none to fill costs one indexed read.
pub async fn fill_missing(db: &Db) -> anyhow::Result<()> {
    const BATCH: i64 = 500;
    loop {
        let mut tx = Change::begin_as(db, Writer::Job(Job::Migration)).await?;
        let missing = store::maintenance::without_reference(tx.conn(), BATCH).await?;
        if missing.is_empty() {
            return Ok(());
        }
        for (id, organization_id) in &missing {
            let reference = loop {
                let drawn = draw();
                if !store::reservations::reference_taken(tx.conn(), organization_id, &drawn).await? {
                    break drawn;
                }
            };
            store::maintenance::set_reference(tx.conn(), id, &reference).await?;
        }
        tx.commit().await?;
    }
}

/// The reference a person typed, if it is one: case, spaces and hyphens do not matter ("k7qm-3xhd").
pub fn parse(typed: &str) -> Option<String> {
    let reference: String =
        typed.chars().filter(|c| !c.is_whitespace() && *c != '-').map(|c| c.to_ascii_uppercase()).collect();
    (reference.len() == LENGTH && reference.bytes().all(|b| ALPHABET.contains(&b))).then_some(reference)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drawn_references_parse_and_look_alikes_do_not() {
        for _ in 0..1000 {
            let reference = draw();
            assert_eq!(parse(&reference).as_deref(), Some(reference.as_str()));
        }
        assert_eq!(parse("k7qm-3xhd").as_deref(), Some("K7QM3XHD"));
        assert_eq!(parse(" K7QM 3XHD ").as_deref(), Some("K7QM3XHD"));
        for not_one in ["K7QM3XH0", "K7QM3XH1", "K7QM3XHO", "K7QM3XHI", "K7QM3XHL", "K7QM3XHU", "K7QM3XH", "K7QM3XHDD"]
        {
            assert_eq!(parse(not_one), None, "{not_one}");
        }
    }

    #[test]
    fn every_character_is_drawn() {
        let mut seen = std::collections::HashSet::new();
        for _ in 0..2000 {
            seen.extend(draw().bytes());
        }
        assert_eq!(seen.len(), ALPHABET.len());
    }
}
