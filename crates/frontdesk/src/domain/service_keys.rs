//! The service's own keys: the one that seals webhook signing secrets ([`SecretBox`]) and the one that signs
//! booking offers. Two places they can come from:
//!
//! * **The database** (the default): each is made at random by the first process that needs it and kept in
//!   `service_secrets`, so that every process of one database shares it. Simple, but a dump of the database holds
//!   the keys beside what they protect: the webhook secrets can be opened and offers forged.
//! * **Outside the database**: a master key of 32 random bytes (base64), from a file (`--secrets-key-file`) or the
//!   environment (`FRONTDESK_SECRETS_KEY`). Both keys are derived from it (HKDF-SHA256, one label each); the
//!   database keeps only a check value (an HMAC under a third derived key), by which a process given another key is
//!   refused at start, before it seals anything the others could not open.
//!
//! Moving a database from the first to the second, or from one master key to the next, happens at start, in one
//! transaction ([`KeyRing::open`]): every sealed webhook secret is opened with the old key and sealed with the new
//! one, the check value is set, and keys kept in the database are deleted. Booking offers signed under the old key
//! stop being accepted (a guest searches again). docs/security.md says how to rotate.

use base64::Engine as _;
use hkdf::Hkdf;
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::secrets::SecretBox;
use super::{now, secrets, Result};
use crate::domain::change::{Change, Job, Writer};
use crate::store::{self, Db};

/// The database's key that seals webhook secrets, when it keeps its keys itself.
const SEALING_KEY: &str = "webhook_secret_key";
/// The database's key that signs booking offers, when it keeps its keys itself.
const OFFER_KEY: &str = "offer_signing_key";
/// The check value of the master key the database is sealed with; empty (or missing) while it keeps its own keys.
const CHECK: &str = "master_key_check";

/// A master key given from outside the database: 32 bytes.
#[derive(Clone)]
pub struct MasterKey([u8; 32]);

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("MasterKey(…)")
    }
}

impl MasterKey {
    /// A key written as base64 (white space around it ignored), as `frontdesk admin new-secrets-key` prints one.
    pub fn parse(text: &str, from: &str) -> anyhow::Result<MasterKey> {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| anyhow::anyhow!("{from}: the secrets key is not base64"))?;
        let key: [u8; 32] = bytes
            .try_into()
            .map_err(|b: Vec<u8>| anyhow::anyhow!("{from}: the secrets key must be 32 bytes; it has {}", b.len()))?;
        Ok(MasterKey(key))
    }

    /// The key in the file at `path`.
    pub fn read(path: &str) -> anyhow::Result<MasterKey> {
        let text =
            std::fs::read_to_string(path).map_err(|e| anyhow::anyhow!("reading the secrets key file {path}: {e}"))?;
        MasterKey::parse(&text, path)
    }

    /// A new random key, as base64.
    pub fn generate() -> String {
        let mut key = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut key);
        base64::engine::general_purpose::STANDARD.encode(key)
    }

    fn derive(&self, label: &str) -> [u8; 32] {
        let mut out = [0u8; 32];
        // 32 bytes are far below HKDF-SHA256's limit of 8160: expanding cannot fail.
        let _ = Hkdf::<Sha256>::new(None, &self.0).expand(label.as_bytes(), &mut out);
        out
    }

    fn sealing(&self) -> anyhow::Result<SecretBox> {
        SecretBox::from_key(&self.derive("frontdesk webhook secret sealing"))
    }

    fn check_value(&self) -> String {
        let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.derive("frontdesk key check"))
            .expect("HMAC takes keys of any length");
        mac.update(b"frontdesk master key");
        hex::encode(mac.finalize().into_bytes())
    }
}

/// Where the keys come from: the settings of `serve`.
#[derive(Debug, Clone, Default)]
pub struct KeySource {
    /// The master key, if one is given.
    pub current: Option<MasterKey>,
    /// While rotating: the master key the database was sealed with until now.
    pub previous: Option<MasterKey>,
}

/// The keys a process works with.
#[derive(Clone)]
pub struct KeyRing {
    pub sealing: SecretBox,
    pub offer_signing: Vec<u8>,
}

impl KeyRing {
    /// The keys of `source` for the database `db`, after moving what is sealed to them if it must (the module's
    /// documentation). Refuses a master key the database was not sealed with, and a database sealed with a master
    /// key when none is given.
    pub async fn open(db: &Db, source: &KeySource) -> anyhow::Result<KeyRing> {
        let Some(current) = &source.current else {
            let check = store::service_secrets::get(&mut *db.read().await?, CHECK).await?;
            anyhow::ensure!(
                check.is_none_or(|c| c.is_empty()),
                "this database's secrets are sealed with a secrets key from outside the database; start with \
                 --secrets-key-file or FRONTDESK_SECRETS_KEY"
            );
            return Ok(KeyRing { sealing: database_sealing(db).await?, offer_signing: database_offer_key(db).await? });
        };
        let at = now();
        let mut tx = Change::begin_as(db, Writer::Job(Job::Startup)).await?;
        let check = store::service_secrets::lock(tx.conn(), CHECK, "", at).await?;
        let sealed_under = if check == current.check_value() {
            None
        } else if !check.is_empty() {
            match &source.previous {
                Some(previous) if check == previous.check_value() => Some(previous.sealing()?),
                Some(_) => anyhow::bail!(
                    "neither the secrets key nor the previous secrets key given is the one this database's secrets \
                     are sealed with"
                ),
                None => anyhow::bail!(
                    "this database's secrets are sealed with another secrets key than the one given; give that key, \
                     or pass it as --previous-secrets-key-file to move to the new one"
                ),
            }
        } else {
            // Kept in the database until now: sealed under its own key, if it has one yet.
            match store::service_secrets::get(tx.conn(), SEALING_KEY).await? {
                Some(hex_key) => Some(SecretBox::from_key(
                    &hex::decode(hex_key).map_err(|_| anyhow::anyhow!("the stored key {SEALING_KEY} is not hex"))?,
                )?),
                None => Some(current.sealing()?),
            }
        };
        if let Some(old) = sealed_under {
            let new = current.sealing()?;
            let mut moved = 0;
            for (id, sealed) in store::webhooks::sealed_secrets(tx.conn()).await? {
                let secret =
                    old.open(&sealed).map_err(|e| anyhow::anyhow!("webhook subscription {id}'s secret: {e}"))?;
                store::webhooks::set_sealed_secret(tx.conn(), &id, &new.seal(&secret)?).await?;
                moved += 1;
            }
            for (id, sealed) in store::channels::sealed_keys(tx.conn()).await? {
                let key = old.open(&sealed).map_err(|e| anyhow::anyhow!("channel connection {id}'s API key: {e}"))?;
                store::channels::set_sealed_key(tx.conn(), &id, &new.seal(&key)?).await?;
                moved += 1;
            }
            store::service_secrets::set(tx.conn(), CHECK, &current.check_value()).await?;
            store::service_secrets::delete(tx.conn(), SEALING_KEY).await?;
            store::service_secrets::delete(tx.conn(), OFFER_KEY).await?;
            tracing::info!(
                secrets = moved,
                "sealed the service's secrets (webhook secrets, channel API keys) with the secrets key given"
            );
        }
        tx.commit().await?;
        Ok(KeyRing { sealing: current.sealing()?, offer_signing: current.derive("frontdesk offer signing").to_vec() })
    }
}

/// The database's own sealing key, made by the first process that needs it.
async fn database_sealing(db: &Db) -> Result<SecretBox> {
    let mut fresh = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut fresh);
    let mut tx = Change::begin_as(db, Writer::Job(Job::Startup)).await?;
    let stored = store::service_secrets::get_or_create(tx.conn(), SEALING_KEY, &hex::encode(fresh), now()).await?;
    tx.commit().await?;
    let key = hex::decode(stored).map_err(|_| anyhow::anyhow!("the stored key {SEALING_KEY} is not hex"))?;
    Ok(SecretBox::from_key(&key)?)
}

/// The database's own offer key, made by the first process that needs it.
async fn database_offer_key(db: &Db) -> Result<Vec<u8>> {
    let mut tx = Change::begin_as(db, Writer::Job(Job::Startup)).await?;
    let value = store::service_secrets::get_or_create(tx.conn(), OFFER_KEY, &secrets::generate(""), now()).await?;
    tx.commit().await?;
    Ok(value.into_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_32_bytes_of_base64_and_derive_apart() {
        let key = MasterKey::parse(&format!(" {}\n", MasterKey::generate()), "test").expect("a generated key");
        assert_ne!(key.derive("a"), key.derive("b"));
        assert_ne!(key.check_value(), MasterKey::parse(&MasterKey::generate(), "t").expect("key").check_value());
        let short = MasterKey::parse("c2hvcnQ=", "f").expect_err("too short");
        assert!(short.to_string().contains("32 bytes"), "{short}");
        assert!(MasterKey::parse("not base64!", "f").is_err());
        assert_eq!(format!("{key:?}"), "MasterKey(…)");
    }
}
