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

/// Copies `from`'s ciphertext into `to`'s row, as someone editing the database file would.
fn move_row(db: &std::path::Path, from: &str, to: &str) {
    let conn = rusqlite::Connection::open(db).unwrap();
    let blob: Vec<u8> = conn
        .query_row("SELECT ciphertext FROM api_keys WHERE provider = ?1", [from], |r| {
            r.get(0)
        })
        .unwrap();
    conn.execute(
        "INSERT INTO api_keys (provider, ciphertext, updated_at) VALUES (?1, ?2, 0)
         ON CONFLICT (provider) DO UPDATE SET ciphertext = excluded.ciphertext",
        rusqlite::params![to, blob],
    )
    .unwrap();
}

fn ciphertext(db: &std::path::Path, provider: &str) -> Vec<u8> {
    let conn = rusqlite::Connection::open(db).unwrap();
    conn.query_row("SELECT ciphertext FROM api_keys WHERE provider = ?1", [provider], |r| {
        r.get(0)
    })
    .unwrap()
}

#[tokio::test]
async fn a_ciphertext_moved_to_another_provider_does_not_decrypt() {
    let (_dir, store, keys) = setup().await;
    keys.set_key("anthropic", SECRET).await.unwrap();
    move_row(store.path(), "anthropic", "openai");
    assert_eq!(
        keys.get_key("openai").await.unwrap(),
        None,
        "the moved key must not decrypt"
    );
    let status = keys.status().await.unwrap();
    let openai = status.iter().find(|s| s.provider == "openai").unwrap();
    assert!(openai.stored && !openai.usable, "{openai:?}");
    // The original row still reads.
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some(SECRET));
    // The crypt says why.
    let crypt = FileKeyCrypt::open(_dir.path().join("profile.key")).unwrap();
    let moved = ciphertext(store.path(), "openai");
    let err = crypt.decrypt_bound(&moved, "openai").unwrap_err();
    assert!(err.to_string().contains("another provider"), "{err}");
    assert_eq!(crypt.decrypt_bound(&moved, "anthropic").unwrap().as_str(), SECRET);
}

/// A host keychain that knows nothing of providers (only `encrypt_string`/`decrypt_string`).
struct Xor;

impl Crypt for Xor {
    fn is_encryption_available(&self) -> bool {
        true
    }
    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError> {
        Ok(plaintext.bytes().map(|b| b ^ 0x5a).collect())
    }
    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError> {
        String::from_utf8(ciphertext.iter().map(|b| b ^ 0x5a).collect()).map_err(|e| CryptError::Failed(e.to_string()))
    }
}

#[tokio::test]
async fn a_host_crypt_binds_the_provider_too_and_reads_old_keys() {
    let dir = tempfile::tempdir().unwrap();
    let store = SqliteStore::open(dir.path().join("profile.db")).await.unwrap();
    let keys = KeyStore::new(store.clone(), Arc::new(Xor));
    keys.set_key("gemini", "AIza-gemini").await.unwrap();
    move_row(store.path(), "gemini", "openrouter");
    assert_eq!(keys.get_key("openrouter").await.unwrap(), None);
    assert_eq!(keys.get_key("gemini").await.unwrap().as_deref(), Some("AIza-gemini"));
    let err = Xor
        .decrypt_bound(&ciphertext(store.path(), "openrouter"), "openrouter")
        .unwrap_err();
    assert!(
        err.to_string().contains("\"gemini\", not \"openrouter\""),
        "names both providers: {err}"
    );
    // A key a host encrypted before the binding existed (the bare key) still reads.
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.execute(
        "INSERT INTO api_keys (provider, ciphertext, updated_at) VALUES ('openai', ?1, 0)",
        [Xor.encrypt_string("sk-old-host").unwrap()],
    )
    .unwrap();
    assert_eq!(keys.get_key("openai").await.unwrap().as_deref(), Some("sk-old-host"));
}

#[tokio::test]
async fn a_key_stored_in_the_old_format_still_decrypts_and_is_rewritten_bound() {
    use aes_gcm::aead::{Aead, KeyInit, Payload};
    let (dir, store, keys) = setup().await;
    // Format 1, built by hand: version byte 1, a 12-byte nonce, AES-256-GCM under the
    // constant associated data every key was stored with before providers were bound.
    let key = std::fs::read(dir.path().join("profile.key")).unwrap();
    let cipher = aes_gcm::Aes256Gcm::new_from_slice(&key).unwrap();
    let nonce = [7u8; 12];
    let sealed = cipher
        .encrypt(
            aes_gcm::Nonce::from_slice(&nonce),
            Payload {
                msg: SECRET.as_bytes(),
                aad: b"agent-store api key v1",
            },
        )
        .unwrap();
    let old = [&[1u8][..], &nonce, &sealed].concat();
    let conn = rusqlite::Connection::open(store.path()).unwrap();
    conn.execute(
        "INSERT INTO api_keys (provider, ciphertext, updated_at) VALUES ('anthropic', ?1, 0)",
        [&old],
    )
    .unwrap();
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some(SECRET));
    assert!(
        keys.status()
            .await
            .unwrap()
            .iter()
            .any(|s| s.provider == "anthropic" && s.usable)
    );
    // The next write stores the bound format (version 2), which reads back.
    keys.set_key("anthropic", SECRET).await.unwrap();
    assert_eq!(ciphertext(store.path(), "anthropic")[0], 2);
    assert_eq!(keys.get_key("anthropic").await.unwrap().as_deref(), Some(SECRET));
}

#[cfg(unix)]
#[tokio::test]
async fn the_database_and_its_wal_are_created_0600() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    // Whatever the umask, not group- or world-readable; 0644 is what SQLite makes by default.
    let path = dir.path().join("profile.db");
    let store = SqliteStore::open(&path).await.unwrap();
    let keys = KeyStore::new(
        store.clone(),
        Arc::new(FileKeyCrypt::open(dir.path().join("profile.key")).unwrap()),
    );
    keys.set_key("anthropic", SECRET).await.unwrap();
    let mode = |name: &str| std::fs::metadata(dir.path().join(name)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode("profile.db"), 0o600);
    assert_eq!(
        mode("profile.db-wal"),
        0o600,
        "SQLite gives the WAL the database's permissions"
    );
    assert_eq!(mode("profile.db-shm"), 0o600);
    drop(keys);
    drop(store);
    // An existing database keeps the permissions its owner chose.
    let shared = dir.path().join("shared.db");
    std::fs::write(&shared, b"").unwrap();
    std::fs::set_permissions(&shared, std::fs::Permissions::from_mode(0o640)).unwrap();
    SqliteStore::open(&shared).await.unwrap();
    assert_eq!(std::fs::metadata(&shared).unwrap().permissions().mode() & 0o777, 0o640);
}
