//! Secrets: API key secrets, access tokens and operator passwords.
//!
//! Key secrets and tokens are 256 random bits with a recognisable prefix. They are stored only as their SHA-256
//! digest: with that much entropy a slow hash adds nothing, and a digest can be looked up through a unique index,
//! so authentication never scans keys. Passwords are low-entropy and get argon2id.

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
    fn passwords_verify() {
        let hash = hash_password("correct horse").unwrap();
        assert!(hash.starts_with("$argon2id$"));
        assert!(verify_password("correct horse", &hash));
        assert!(!verify_password("wrong", &hash));
        assert!(!verify_password("x", "not a hash"));
    }
}
