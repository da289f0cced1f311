#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic, missing_docs)]
//! The encrypted key store: every rule of the issue, against a real database file.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use agent_store::{Crypt, CryptError, FileKeyCrypt, KeyStatus, KeyStore, KeyStoreError, SqliteStore};

const SECRET: &str = "sk-ant-api03-PLAINTEXT-MUST-NEVER-HIT-DISK-0123456789";

/// A keychain double whose availability can be switched off.
struct Switchable {
    inner: FileKeyCrypt,
    available: AtomicBool,
}

impl Crypt for Switchable {
    fn is_encryption_available(&self) -> bool {
        self.available.load(Ordering::SeqCst)
    }
    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError> {
        self.inner.encrypt_string(plaintext)
    }
    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError> {
        self.inner.decrypt_string(ciphertext)
    }
}

async fn setup() -> (tempfile::TempDir, SqliteStore, KeyStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    let crypt = Arc::new(FileKeyCrypt::open(dir.path().join("profile.key")).unwrap());
    let keys = KeyStore::new(store.clone(), crypt);
    (dir, store, keys)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[tokio::test]
async fn keys_round_trip_per_provider_and_clear_independently() {
    let (_dir, _store, keys) = setup().await;
    keys.set_key("anthropic", SECRET).await.unwrap();
    keys.set_key("openai", "  sk-openai-1\n").await.unwrap();
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some(SECRET));
    assert_eq!(
        keys.get_key("openai").await.unwrap().as_deref(),
        Some("sk-openai-1"),
        "pasted whitespace is trimmed"
    );
    assert_eq!(keys.get_key("gemini").await.unwrap(), None);
    // Replacing a key.
    keys.set_key("openai", "sk-openai-2").await.unwrap();
    assert_eq!(keys.get_key("openai").await.unwrap().as_deref(), Some("sk-openai-2"));
    // Clearing one leaves the others; clearing twice is fine.
    keys.clear_key("openai").await.unwrap();
    keys.clear_key("openai").await.unwrap();
    assert_eq!(keys.get_key("openai").await.unwrap(), None);
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some(SECRET));
}

#[tokio::test]
async fn unknown_provider_and_empty_key_are_refused() {
    let (_dir, _store, keys) = setup().await;
    let err = keys.set_key("acme-llm", "k").await.unwrap_err();
    assert!(matches!(err, KeyStoreError::UnknownProvider { ref provider, .. } if provider == "acme-llm"));
    assert!(
        err.to_string().contains("anthropic"),
        "the error lists the accepted providers: {err}"
    );
    assert!(matches!(
        keys.get_key("acme-llm").await,
        Err(KeyStoreError::UnknownProvider { .. })
    ));
    assert!(matches!(
        keys.clear_key("acme-llm").await,
        Err(KeyStoreError::UnknownProvider { .. })
    ));
    assert_eq!(
        keys.set_key("anthropic", "").await.unwrap_err(),
        KeyStoreError::EmptyKey("anthropic".into())
    );
    assert_eq!(
        keys.set_key("anthropic", " \n\t").await.unwrap_err(),
        KeyStoreError::EmptyKey("anthropic".into())
    );
    assert_eq!(keys.get_key("anthropic").await.unwrap(), None);
    // A custom provider list.
    let custom = keys.clone().with_providers(["acme-llm"]);
    custom.set_key("acme-llm", "k").await.unwrap();
    assert!(matches!(
        custom.set_key("anthropic", "k").await,
        Err(KeyStoreError::UnknownProvider { .. })
    ));
}

#[tokio::test]
async fn no_plaintext_fallback_when_encryption_is_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    let crypt = Arc::new(Switchable {
        inner: FileKeyCrypt::open(dir.path().join("k")).unwrap(),
        available: AtomicBool::new(true),
    });
    let keys = KeyStore::new(store.clone(), crypt.clone());
    keys.set_key("anthropic", "sk-before").await.unwrap();
    crypt.available.store(false, Ordering::SeqCst);
    assert_eq!(
        keys.set_key("anthropic", SECRET).await.unwrap_err(),
        KeyStoreError::EncryptionUnavailable("anthropic".into())
    );
    assert_eq!(
        keys.set_key("openai", SECRET).await.unwrap_err(),
        KeyStoreError::EncryptionUnavailable("openai".into())
    );
    crypt.available.store(true, Ordering::SeqCst);
    // Nothing was written: the old key is intact and the new provider has none.
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some("sk-before"));
    assert_eq!(keys.get_key("openai").await.unwrap(), None);
    store.checkpoint().await.unwrap();
    let bytes = std::fs::read(store.path()).unwrap();
    assert!(!contains(&bytes, SECRET.as_bytes()));
}

#[tokio::test]
async fn a_key_from_another_machine_reads_as_absent() {
    let (dir, store, keys) = setup().await;
    keys.set_key("anthropic", SECRET).await.unwrap();
    keys.set_key("openrouter", "sk-or-1").await.unwrap();
    store.checkpoint().await.unwrap();
    // "Another machine": the same database file, a different key file.
    let copied = dir.path().join("copied.db");
    std::fs::copy(store.path(), &copied).unwrap();
    let elsewhere = KeyStore::new(
        SqliteStore::open(&copied).await.unwrap(),
        Arc::new(FileKeyCrypt::open(dir.path().join("other-machine.key")).unwrap()),
    );
    assert_eq!(elsewhere.get_key("anthropic").await.unwrap(), None);
    let status = elsewhere.status().await.unwrap();
    let anthropic = status.iter().find(|s| s.provider == "anthropic").unwrap();
    assert_eq!(
        anthropic,
        &KeyStatus {
            provider: "anthropic".into(),
            usable: false,
            stored: true
        }
    );
    // A new key can be stored there and is usable.
    elsewhere.set_key("anthropic", "sk-new-machine").await.unwrap();
    assert_eq!(
        elsewhere.get_key("anthropic").await.unwrap().as_deref(),
        Some("sk-new-machine")
    );
}

#[tokio::test]
async fn status_reports_usable_keys_without_revealing_them() {
    let (_dir, _store, keys) = setup().await;
    keys.set_key("anthropic", SECRET).await.unwrap();
    keys.set_key("gemini", "AIza-gemini-key").await.unwrap();
    let status = keys.status().await.unwrap();
    let usable: Vec<&str> = status
        .iter()
        .filter(|s| s.usable)
        .map(|s| s.provider.as_str())
        .collect();
    assert_eq!(usable, vec!["anthropic", "gemini"]);
    assert_eq!(status.len(), keys.providers().len());
    let shown = format!("{status:?} {}", serde_json::to_string(&status).unwrap());
    assert!(
        !shown.contains(SECRET) && !shown.contains("AIza"),
        "status must not reveal keys: {shown}"
    );
    assert!(!format!("{keys:?}").contains(SECRET));
}

#[tokio::test]
async fn the_key_never_appears_in_the_database_file_in_plaintext() {
    let (dir, store, keys) = setup().await;
    keys.set_key("anthropic", SECRET).await.unwrap();
    keys.set_key("openai", SECRET).await.unwrap();
    // Look at the write-ahead log before it is checkpointed, then at the main file after.
    let wal = dir.path().join("profile.db-wal");
    let mut files = vec![std::fs::read(&wal).unwrap_or_default()];
    store.checkpoint().await.unwrap();
    files.push(std::fs::read(store.path()).unwrap());
    let needle = SECRET.as_bytes();
    let utf16: Vec<u8> = SECRET.encode_utf16().flat_map(|u| u.to_le_bytes()).collect();
    for bytes in &files {
        assert!(!contains(bytes, needle), "plaintext key found in the database files");
        assert!(!contains(bytes, &utf16));
        assert!(!contains(bytes, b"PLAINTEXT-MUST-NEVER"), "not even a part of it");
    }
    assert!(files[1].len() > 4096, "the database was actually read");
    // The two ciphertexts of the same key differ (fresh nonce each time).
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    let blobs: Vec<Vec<u8>> = conn
        .prepare("SELECT ciphertext FROM api_keys ORDER BY provider")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(blobs.len(), 2);
    assert_ne!(blobs[0], blobs[1]);
}

#[cfg(unix)]
#[test]
fn the_key_file_is_created_0600_and_a_readable_one_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("profile.key");
    let crypt = FileKeyCrypt::open(&path).unwrap();
    let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    assert_eq!(std::fs::read(&path).unwrap().len(), 32);
    // Reopening uses the same key.
    let sealed = crypt.encrypt_string("hello").unwrap();
    assert_eq!(
        FileKeyCrypt::open(&path).unwrap().decrypt_string(&sealed).unwrap(),
        "hello"
    );
    // Tampering is detected.
    let mut tampered = sealed.clone();
    *tampered.last_mut().unwrap() ^= 1;
    assert!(crypt.decrypt_string(&tampered).is_err());
    assert!(!format!("{crypt:?}").contains("key:"));
    // A key file others can read is refused rather than silently used.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
    let err = FileKeyCrypt::open(&path).unwrap_err();
    assert!(
        matches!(err, CryptError::Unavailable(ref m) if m.contains("chmod 600")),
        "{err}"
    );
    // A file that is not a key is refused.
    let junk = dir.path().join("junk.key");
    std::fs::write(&junk, b"short").unwrap();
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o600)).unwrap();
    assert!(FileKeyCrypt::open(&junk).is_err());
}
