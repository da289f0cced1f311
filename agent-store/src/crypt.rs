//! [`Crypt`]: host-supplied encryption for the key store, and [`FileKeyCrypt`].

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};

/// Why encrypting or decrypting failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CryptError {
    /// No encryption is available (no keychain, locked keychain, missing key file).
    #[error("encryption is unavailable: {0}")]
    Unavailable(String),
    /// The operation failed (for decryption: the data was made with another key or altered).
    #[error("{0}")]
    Failed(String),
}

/// Encryption supplied by the host, shaped like Electron's `safeStorage`: an OS keychain
/// (Keychain, DPAPI, libsecret/kwallet) in a desktop app, a test double in tests, or
/// [`FileKeyCrypt`] where there is no keychain.
pub trait Crypt: Send + Sync {
    /// Whether [`Self::encrypt_string`] can be used now.
    fn is_encryption_available(&self) -> bool;
    /// Encrypts text. The output is opaque bytes.
    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError>;
    /// Decrypts what [`Self::encrypt_string`] produced (on this machine, with this key).
    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError>;
}

const FORMAT_V1: u8 = 1;
const NONCE_LEN: usize = 12;
const AAD: &[u8] = b"agent-store api key v1";

/// A [`Crypt`] for hosts without an OS keychain: AES-256-GCM with a random key held in a file
/// created with permissions 0600 (owner read/write only).
///
/// **This is weaker than an OS keychain.** The key sits on disk next to the data it protects:
/// anyone (or any process) that can read your files as you can read the key and decrypt every
/// stored API key, and a backup that holds both files holds the keys. What it does give: the
/// database alone (a copied or synced profile, a bug report with the `.db` attached) reveals no
/// key, and keys encrypted on one machine read as absent on another. Prefer the platform
/// keychain (Electron's `safeStorage`, the OS secret service) whenever the host has one.
pub struct FileKeyCrypt {
    path: PathBuf,
    cipher: Aes256Gcm,
}

impl std::fmt::Debug for FileKeyCrypt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never print the key.
        f.debug_struct("FileKeyCrypt")
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}

impl FileKeyCrypt {
    /// Loads the key file at `path`, or creates it (0600, 32 random bytes) if it does not
    /// exist. An existing file that others may read, or of the wrong size, is refused.
    pub fn open(path: impl AsRef<Path>) -> Result<Self, CryptError> {
        let path = path.as_ref().to_path_buf();
        let key = match read_key(&path)? {
            Some(key) => key,
            None => create_key(&path)?,
        };
        let cipher = Aes256Gcm::new_from_slice(&key)
            .map_err(|e| CryptError::Failed(format!("bad key in {}: {e}", path.display())))?;
        Ok(FileKeyCrypt { path, cipher })
    }

    /// The key file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn read_key(path: &Path) -> Result<Option<Vec<u8>>, CryptError> {
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(CryptError::Unavailable(format!("cannot read {}: {e}", path.display()))),
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = file
            .metadata()
            .map_err(|e| CryptError::Unavailable(format!("cannot stat {}: {e}", path.display())))?
            .permissions()
            .mode();
        if mode & 0o077 != 0 {
            return Err(CryptError::Unavailable(format!(
                "key file {} is accessible to other users (mode {:o}); run `chmod 600` on it",
                path.display(),
                mode & 0o777
            )));
        }
    }
    let mut key = Vec::with_capacity(32);
    file.read_to_end(&mut key)
        .map_err(|e| CryptError::Unavailable(format!("cannot read {}: {e}", path.display())))?;
    if key.len() != 32 {
        return Err(CryptError::Unavailable(format!(
            "key file {} holds {} bytes, expected 32; it is not an agent-store key file",
            path.display(),
            key.len()
        )));
    }
    Ok(Some(key))
}

fn create_key(path: &Path) -> Result<Vec<u8>, CryptError> {
    let key = Aes256Gcm::generate_key(OsRng);
    let mut options = OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut file = match options.open(path) {
        Ok(f) => f,
        // Another process created it first: use theirs.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            return read_key(path)?
                .ok_or_else(|| CryptError::Unavailable(format!("{} vanished while opening it", path.display())));
        }
        Err(e) => {
            return Err(CryptError::Unavailable(format!(
                "cannot create {}: {e}",
                path.display()
            )));
        }
    };
    file.write_all(&key)
        .and_then(|()| file.sync_all())
        .map_err(|e| CryptError::Unavailable(format!("cannot write {}: {e}", path.display())))?;
    Ok(key.to_vec())
}

impl Crypt for FileKeyCrypt {
    fn is_encryption_available(&self) -> bool {
        true
    }

    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: AAD,
                },
            )
            .map_err(|_| CryptError::Failed("AES-GCM encryption failed".into()))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
        out.push(FORMAT_V1);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError> {
        let Some((&FORMAT_V1, rest)) = ciphertext.split_first() else {
            return Err(CryptError::Failed("not data encrypted by FileKeyCrypt".into()));
        };
        if rest.len() < NONCE_LEN {
            return Err(CryptError::Failed("encrypted data is truncated".into()));
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad: AAD })
            .map_err(|_| CryptError::Failed("cannot decrypt: encrypted with another key, or altered".into()))?;
        String::from_utf8(plain).map_err(|_| CryptError::Failed("decrypted data is not UTF-8".into()))
    }
}
