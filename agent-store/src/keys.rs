//! [`KeyStore`]: one API key per provider, encrypted through a host-supplied [`Crypt`].

use std::sync::Arc;

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};
use zeroize::Zeroizing;

use crate::now_millis;
use agent_core::StoreError;

use crate::crypt::{Crypt, CryptError};
use crate::sql_error::backend;
use crate::sqlite::SqliteStore;

/// The providers a [`KeyStore`] accepts unless told otherwise.
pub const DEFAULT_PROVIDERS: &[&str] = &["anthropic", "gemini", "openai", "openai-compatible", "openrouter"];

/// Why a key-store call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyStoreError {
    /// The provider is not one the store accepts.
    #[error("unknown provider {provider:?}; expected one of: {known}")]
    UnknownProvider {
        /// The name given.
        provider: String,
        /// The accepted names, comma-separated.
        known: String,
    },
    /// The key is empty (or only whitespace).
    #[error("refusing to store an empty API key for {0}")]
    EmptyKey(String),
    /// Encryption is unavailable, so nothing is written (there is no plaintext fallback).
    #[error("cannot store the API key for {0}: encryption is unavailable, and keys are never stored in plaintext")]
    EncryptionUnavailable(String),
    /// Encrypting failed.
    #[error("cannot encrypt the API key: {0}")]
    Crypt(#[from] CryptError),
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Whether a provider has a usable key. Never contains the key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KeyStatus {
    /// The provider.
    pub provider: String,
    /// A key is stored and decrypts on this machine.
    pub usable: bool,
    /// Something is stored, usable or not (a key copied from another machine is stored but
    /// not usable).
    pub stored: bool,
}

/// One API key per provider, kept encrypted in the `api_keys` table of a [`SqliteStore`].
///
/// - No plaintext fallback: [`Self::set_key`] fails when [`Crypt::is_encryption_available`]
///   says no.
/// - An unknown provider or an empty key is refused.
/// - A key that cannot be decrypted (the database was copied to another machine, or the
///   keychain was reset) reads as absent.
/// - Each key is bound to its provider ([`Crypt::encrypt_bound`]): a ciphertext copied into
///   another provider's row reads as absent there (and the reason is logged). Keys stored
///   before this binding existed still read; [`Self::set_key`] always writes the bound form.
/// - Plaintext copies made here (the trimmed key, decrypted keys) are wiped when dropped. The
///   key [`Self::get_key`] returns is the caller's to wipe (`zeroize::Zeroizing::new(key)`).
/// - [`Self::status`] says which providers have a usable key without revealing any.
/// - [`Self::clear_key`] removes one key and leaves the others.
///
/// ```
/// use std::sync::Arc;
/// use agent_store::{FileKeyCrypt, KeyStore, SqliteStore};
/// # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// # let dir = tempfile::tempdir()?;
/// let store = SqliteStore::open(dir.path().join("profile.db")).await?;
/// // Prefer the platform keychain; FileKeyCrypt is for hosts without one.
/// let crypt = Arc::new(FileKeyCrypt::open(dir.path().join("profile.key"))?);
/// let keys = KeyStore::new(store, crypt);
/// keys.set_key("anthropic", "sk-ant-example").await?;
/// assert_eq!(keys.get_key("anthropic").await?.as_deref(), Some("sk-ant-example"));
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct KeyStore {
    store: SqliteStore,
    crypt: Arc<dyn Crypt>,
    providers: Arc<[String]>,
}

impl std::fmt::Debug for KeyStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeyStore")
            .field("store", &self.store)
            .field("providers", &self.providers)
            .finish_non_exhaustive()
    }
}

impl KeyStore {
    /// A key store over `store`'s database, accepting [`DEFAULT_PROVIDERS`].
    pub fn new(store: SqliteStore, crypt: Arc<dyn Crypt>) -> Self {
        KeyStore {
            store,
            crypt,
            providers: DEFAULT_PROVIDERS.iter().map(|p| (*p).to_owned()).collect(),
        }
    }

    /// Accepts exactly these providers instead of the defaults.
    pub fn with_providers(mut self, providers: impl IntoIterator<Item = impl Into<String>>) -> Self {
        let mut list: Vec<String> = providers.into_iter().map(Into::into).collect();
        list.sort();
        list.dedup();
        self.providers = list.into();
        self
    }

    /// The accepted providers, sorted.
    pub fn providers(&self) -> &[String] {
        &self.providers
    }

    fn check_provider(&self, provider: &str) -> Result<(), KeyStoreError> {
        if self.providers.iter().any(|p| p == provider) {
            Ok(())
        } else {
            Err(KeyStoreError::UnknownProvider {
                provider: provider.to_owned(),
                known: self.providers.join(", "),
            })
        }
    }

    /// Encrypts and stores `key` for `provider`, replacing any previous one. Surrounding
    /// whitespace (a pasted newline) is removed first.
    pub async fn set_key(&self, provider: &str, key: &str) -> Result<(), KeyStoreError> {
        self.check_provider(provider)?;
        let key = Zeroizing::new(key.trim().to_owned());
        if key.is_empty() {
            return Err(KeyStoreError::EmptyKey(provider.to_owned()));
        }
        let crypt = self.crypt.clone();
        let name = provider.to_owned();
        // Host encryption may be slow (a keychain prompt): keep it off the executor.
        let sealed = tokio::task::spawn_blocking(move || {
            if !crypt.is_encryption_available() {
                return Err(KeyStoreError::EncryptionUnavailable(name));
            }
            Ok(crypt.encrypt_bound(&key, &name)?)
        })
        .await
        .map_err(|e| StoreError::Backend(format!("encryption task failed: {e}")))??;
        let provider = provider.to_owned();
        self.store
            .write(move |conn| {
                conn.execute(
                    "INSERT INTO api_keys (provider, ciphertext, updated_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (provider) DO UPDATE SET ciphertext = excluded.ciphertext,
                       updated_at = excluded.updated_at",
                    params![provider, sealed, now_millis()],
                )
                .map_err(backend)?;
                Ok(())
            })
            .await?;
        Ok(())
    }

    async fn sealed(&self, provider: &str) -> Result<Option<Vec<u8>>, KeyStoreError> {
        let provider = provider.to_owned();
        Ok(self
            .store
            .read(move |conn| {
                conn.query_row("SELECT ciphertext FROM api_keys WHERE provider = ?1", [provider], |r| {
                    r.get(0)
                })
                .optional()
                .map_err(backend)
            })
            .await?)
    }

    async fn open(&self, provider: &str, sealed: Vec<u8>) -> Option<Zeroizing<String>> {
        let crypt = self.crypt.clone();
        let name = provider.to_owned();
        let result = tokio::task::spawn_blocking(move || crypt.decrypt_bound(&sealed, &name)).await;
        match result {
            Ok(Ok(key)) if !key.is_empty() => Some(key),
            Ok(Ok(_)) => None,
            Ok(Err(e)) => {
                tracing::warn!(provider, error = %e, "stored API key cannot be decrypted; treating it as absent");
                None
            }
            Err(e) => {
                tracing::warn!(provider, error = %e, "decryption task failed");
                None
            }
        }
    }

    /// The provider's key, or `None` when there is none or it cannot be decrypted here (for
    /// instance a ciphertext moved from another provider's row). The returned string is not
    /// wiped on drop: wrap it in `zeroize::Zeroizing` if it is kept.
    pub async fn get_key(&self, provider: &str) -> Result<Option<String>, KeyStoreError> {
        self.check_provider(provider)?;
        match self.sealed(provider).await? {
            // Moved out, not copied: the emptied wrapper leaves no second copy behind.
            Some(sealed) => Ok(self
                .open(provider, sealed)
                .await
                .map(|mut key| std::mem::take(&mut *key))),
            None => Ok(None),
        }
    }

    /// For every accepted provider: whether it has a usable key. Reveals no key.
    pub async fn status(&self) -> Result<Vec<KeyStatus>, KeyStoreError> {
        let mut out = Vec::with_capacity(self.providers.len());
        for provider in self.providers.iter() {
            let sealed = self.sealed(provider).await?;
            let stored = sealed.is_some();
            let usable = match sealed {
                Some(sealed) => self.open(provider, sealed).await.is_some(),
                None => false,
            };
            out.push(KeyStatus {
                provider: provider.clone(),
                usable,
                stored,
            });
        }
        Ok(out)
    }

    /// Removes the provider's key (others stay). Clearing a missing key is not an error.
    pub async fn clear_key(&self, provider: &str) -> Result<(), KeyStoreError> {
        self.check_provider(provider)?;
        let provider = provider.to_owned();
        self.store
            .write(move |conn| {
                conn.execute("DELETE FROM api_keys WHERE provider = ?1", [provider])
                    .map_err(backend)?;
                Ok(())
            })
            .await?;
        Ok(())
    }
}
