//! Secrets: API key secrets, access tokens, operator passwords and webhook signing secrets.
//!
//! Key secrets and tokens are 256 random bits with a recognisable prefix. They are stored only as their SHA-256
//! digest: with that much entropy a slow hash adds nothing, and a digest can be looked up through a unique index,
//! so authentication never scans keys. Passwords are low-entropy and get argon2id. Webhook signing secrets must
//! be read back to sign deliveries, so they are sealed instead ([`SecretBox`]).

use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use base64::Engine as _;
use rand::RngCore;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

pub const API_KEY_PREFIX: &str = "fdk_";
pub const ACCESS_TOKEN_PREFIX: &str = "fdt_";

/// A fresh secret: `prefix` followed by 32 random bytes in URL-safe base64.
pub fn generate(prefix: &str) -> String {
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{prefix}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// The stored digest of a secret (lowercase hex SHA-256).
pub fn digest(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// Constant-time equality of two digests.
pub fn digests_match(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

/// Password hashing: at most one argon2id computation per core at a time. Each holds 19 MiB while it runs, and
/// signing in needs no credential: without a bound, a few hundred parallel sign-ins took a process from 58 MB to
/// 1.1 GB. Beyond the bound a hash waits its turn ([`HASH_QUEUE_WAIT`] at most) instead of taking memory.
pub struct PasswordHashing {
    permits: tokio::sync::Semaphore,
    limit: usize,
    in_flight: std::sync::atomic::AtomicUsize,
    peak: std::sync::atomic::AtomicUsize,
}

/// How long a password check waits for a turn before it is refused as busy.
pub const HASH_QUEUE_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The service is hashing as many passwords as it may at once, and this one waited [`HASH_QUEUE_WAIT`] in vain.
#[derive(Debug, thiserror::Error)]
#[error("too many sign-ins are being checked at once")]
pub struct HashingBusy;

impl PasswordHashing {
    /// The process's one gate.
    pub fn global() -> &'static PasswordHashing {
        static GATE: std::sync::OnceLock<PasswordHashing> = std::sync::OnceLock::new();
        GATE.get_or_init(|| {
            let limit = std::thread::available_parallelism().map_or(2, |n| n.get()).max(1);
            PasswordHashing {
                permits: tokio::sync::Semaphore::new(limit),
                limit,
                in_flight: Default::default(),
                peak: Default::default(),
            }
        })
    }

    /// How many hashes may run at once.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// The most hashes that ran at once since the process started.
    pub fn peak(&self) -> usize {
        self.peak.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Runs `work` (a password hash or check) on the blocking pool once a turn is free.
    pub async fn run<T: Send + 'static>(&'static self, work: impl FnOnce() -> T + Send + 'static) -> anyhow::Result<T> {
        use std::sync::atomic::Ordering;
        let permit = tokio::time::timeout(HASH_QUEUE_WAIT, self.permits.acquire())
            .await
            .map_err(|_| HashingBusy)?
            .map_err(anyhow::Error::from)?;
        let result = tokio::task::spawn_blocking(move || {
            let running = self.in_flight.fetch_add(1, Ordering::AcqRel) + 1;
            self.peak.fetch_max(running, Ordering::AcqRel);
            let out = work();
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            out
        })
        .await;
        drop(permit);
        Ok(result?)
    }
}

pub fn hash_password(password: &str) -> anyhow::Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| anyhow::anyhow!("hashing a password: {e}"))
}

/// Checks a password against its argon2id hash (the comparison inside is constant-time).
pub fn verify_password(password: &str, hash: &str) -> bool {
    PasswordHash::new(hash)
        .map(|parsed| Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok())
        .unwrap_or(false)
}

/// A valid argon2id hash of a random password, verified against when the e-mail is unknown so that a failed
/// login takes as long whether or not the operator exists.
pub fn dummy_password_hash() -> &'static str {
    static HASH: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    HASH.get_or_init(|| hash_password(&generate("")).unwrap_or_default())
}

/// Authenticated encryption (XChaCha20-Poly1305) for the secrets the service must read back. Its key is the
/// database's own or derived from a key given from outside ([`super::service_keys`]), shared by every process, so
/// that each can open what another sealed.
#[derive(Clone)]
pub struct SecretBox(chacha20poly1305::XChaCha20Poly1305);

impl SecretBox {
    /// A box sealing with the 32-byte `key`.
    pub fn from_key(key: &[u8]) -> anyhow::Result<SecretBox> {
        use chacha20poly1305::KeyInit;
        let cipher = chacha20poly1305::XChaCha20Poly1305::new_from_slice(key)
            .map_err(|_| anyhow::anyhow!("a sealing key must be 32 bytes; this one has {}", key.len()))?;
        Ok(SecretBox(cipher))
    }

    /// `secret` sealed under a fresh random nonce, as base64 of nonce and ciphertext.
    pub fn seal(&self, secret: &str) -> anyhow::Result<String> {
        use chacha20poly1305::aead::{Aead, AeadCore};
        let nonce = chacha20poly1305::XChaCha20Poly1305::generate_nonce(&mut OsRng);
        let sealed =
            self.0.encrypt(&nonce, secret.as_bytes()).map_err(|_| anyhow::anyhow!("sealing a secret failed"))?;
        let mut bytes = nonce.to_vec();
        bytes.extend_from_slice(&sealed);
        Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
    }

    /// The secret sealed by [`SecretBox::seal`]; an error if it was altered or sealed under another key.
    pub fn open(&self, sealed: &str) -> anyhow::Result<String> {
        use chacha20poly1305::aead::Aead;
        let bytes = base64::engine::general_purpose::STANDARD.decode(sealed)?;
        anyhow::ensure!(bytes.len() > 24, "a sealed secret is too short");
        let (nonce, ciphertext) = bytes.split_at(24);
        let plain = self
            .0
            .decrypt(chacha20poly1305::XNonce::from_slice(nonce), ciphertext)
            .map_err(|_| anyhow::anyhow!("a sealed secret does not open with this key"))?;
        Ok(String::from_utf8(plain)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_prefixed_and_distinct() {
        let a = generate(API_KEY_PREFIX);
        let b = generate(API_KEY_PREFIX);
        assert!(a.starts_with(API_KEY_PREFIX));
        assert_eq!(a.len(), API_KEY_PREFIX.len() + 43);
        assert_ne!(a, b);
    }

    #[test]
    fn digests_compare() {
        assert!(digests_match(&digest("x"), &digest("x")));
        assert!(!digests_match(&digest("x"), &digest("y")));
        assert!(!digests_match("ab", "abc"));
    }

    #[test]
    fn sealed_secrets_open_only_unaltered_and_with_their_key() {
        use chacha20poly1305::KeyInit;
        let a = SecretBox(chacha20poly1305::XChaCha20Poly1305::new(&[7u8; 32].into()));
        let b = SecretBox(chacha20poly1305::XChaCha20Poly1305::new(&[8u8; 32].into()));
        let sealed = a.seal("whsec_abc").unwrap();
        assert!(!sealed.contains("whsec_abc"));
        assert_ne!(sealed, a.seal("whsec_abc").unwrap(), "a fresh nonce each time");
        assert_eq!(a.open(&sealed).unwrap(), "whsec_abc");
        assert!(b.open(&sealed).is_err());
        let mut tampered = base64::engine::general_purpose::STANDARD.decode(&sealed).unwrap();
        let last = tampered.len() - 1;
        tampered[last] ^= 1;
        assert!(a.open(&base64::engine::general_purpose::STANDARD.encode(tampered)).is_err());
    }

    #[test]
    fn passwords_verify() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong", &hash));
        assert!(!verify_password("x", "not a hash"));
    }
}
