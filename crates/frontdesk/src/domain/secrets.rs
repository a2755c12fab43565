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

/// Authenticated encryption (XChaCha20-Poly1305) for the secrets the service must read back. The key is created
/// once per database by the first process that needs it, so every process can open what another sealed; a copy
/// of a table holding sealed secrets is useless without it.
#[derive(Clone)]
pub struct SecretBox(chacha20poly1305::XChaCha20Poly1305);

impl SecretBox {
    /// The database's key named `name`, created on first use.
    pub async fn load(db: &crate::store::Db, name: &str) -> super::Result<SecretBox> {
        use chacha20poly1305::KeyInit;
        let mut fresh = [0u8; 32];
        rand::rngs::OsRng.fill_bytes(&mut fresh);
        let mut tx = db.begin_write().await?;
        let stored = crate::store::booking::service_secret(tx.conn(), name, &hex::encode(fresh), super::now()).await?;
        tx.commit().await?;
        let key = hex::decode(stored).map_err(|_| anyhow::anyhow!("the stored key {name} is not hex"))?;
        let cipher = chacha20poly1305::XChaCha20Poly1305::new_from_slice(&key)
            .map_err(|_| anyhow::anyhow!("the stored key {name} has the wrong length"))?;
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
