//! [`Crypt`]: host-supplied encryption for the key store, and [`FileKeyCrypt`].

use std::fs::OpenOptions;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use aes_gcm::aead::rand_core::RngCore;
use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Nonce};
use zeroize::{Zeroize, Zeroizing};

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
///
/// Hosts implement the first three methods. The key store calls [`Self::encrypt_bound`] and
/// [`Self::decrypt_bound`] with the provider's name as the context, so that a ciphertext copied
/// into another provider's row does not decrypt there.
pub trait Crypt: Send + Sync {
    /// Whether [`Self::encrypt_string`] can be used now.
    fn is_encryption_available(&self) -> bool;
    /// Encrypts text. The output is opaque bytes.
    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError>;
    /// Decrypts what [`Self::encrypt_string`] produced (on this machine, with this key).
    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError>;

    /// Encrypts `plaintext` bound to `context` (no NUL allowed): [`Self::decrypt_bound`] with
    /// another context fails. The default encrypts the context together with the text through
    /// [`Self::encrypt_string`], so any authenticated cipher the host uses protects the binding.
    fn encrypt_bound(&self, plaintext: &str, context: &str) -> Result<Vec<u8>, CryptError> {
        let framed = frame(plaintext, context)?;
        self.encrypt_string(&framed)
    }

    /// Decrypts what [`Self::encrypt_bound`] produced for the same `context`; a ciphertext made
    /// for another context is an error naming both. Data from [`Self::encrypt_string`] (stored
    /// before contexts were bound) still decrypts, unchecked. The result is wiped when dropped.
    fn decrypt_bound(&self, ciphertext: &[u8], context: &str) -> Result<Zeroizing<String>, CryptError> {
        unframe(Zeroizing::new(self.decrypt_string(ciphertext)?), context)
    }
}

/// Starts a plaintext that carries its context. API keys do not start with NUL, so a key stored
/// before binding existed is not mistaken for it.
const BOUND_PREFIX: &str = "\0agent-store bound\0";

/// `BOUND_PREFIX`, the context, NUL, the text; built in one allocation so no unwiped copy is
/// left behind by a reallocation.
fn frame(plaintext: &str, context: &str) -> Result<Zeroizing<String>, CryptError> {
    check_context(context)?;
    let mut framed = Zeroizing::new(String::with_capacity(
        BOUND_PREFIX.len() + context.len() + 1 + plaintext.len(),
    ));
    framed.push_str(BOUND_PREFIX);
    framed.push_str(context);
    framed.push('\0');
    framed.push_str(plaintext);
    Ok(framed)
}

/// The text of a decrypted [`frame`], checked against `context`; unframed text passes as is.
fn unframe(plain: Zeroizing<String>, context: &str) -> Result<Zeroizing<String>, CryptError> {
    let Some(rest) = plain.strip_prefix(BOUND_PREFIX) else {
        return Ok(plain);
    };
    let Some((bound, text)) = rest.split_once('\0') else {
        return Err(CryptError::Failed(
            "decrypted data is malformed (no end of context)".into(),
        ));
    };
    if bound != context {
        return Err(moved(bound, context));
    }
    Ok(Zeroizing::new(text.to_owned()))
}

fn moved(bound: &str, context: &str) -> CryptError {
    CryptError::Failed(format!(
        "this key was encrypted for {bound:?}, not {context:?}: it was moved to another provider's row"
    ))
}

fn check_context(context: &str) -> Result<(), CryptError> {
    if context.contains('\0') {
        return Err(CryptError::Failed(format!("context {context:?} contains NUL")));
    }
    Ok(())
}

/// Format 1: AES-256-GCM under a constant associated data; what [`Crypt::encrypt_string`] makes.
const FORMAT_V1: u8 = 1;
/// Format 2: AES-256-GCM whose associated data ends with the context (the provider's name),
/// made by [`Crypt::encrypt_bound`].
const FORMAT_V2: u8 = 2;
const NONCE_LEN: usize = 12;
const KEY_LEN: usize = 32;
const AAD_V1: &[u8] = b"agent-store api key v1";
const AAD_V2_PREFIX: &[u8] = b"agent-store api key v2\0";

fn aad_v2(context: &str) -> Vec<u8> {
    [AAD_V2_PREFIX, context.as_bytes()].concat()
}

/// A [`Crypt`] for hosts without an OS keychain: AES-256-GCM with a random key held in a file
/// created with permissions 0600 (owner read/write only).
///
/// **This is weaker than an OS keychain.** The key sits on disk next to the data it protects:
/// anyone (or any process) that can read your files as you can read the key and decrypt every
/// stored API key, and a backup that holds both files holds the keys. What it does give: the
/// database alone (a copied or synced profile, a bug report with the `.db` attached) reveals no
/// key, and keys encrypted on one machine read as absent on another. Prefer the platform
/// keychain (Electron's `safeStorage`, the OS secret service) whenever the host has one.
///
/// The key bytes read from the file are wiped after use, and the cipher's key schedule when
/// this value is dropped.
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
        let cipher = Aes256Gcm::new_from_slice(&key[..])
            .map_err(|e| CryptError::Failed(format!("bad key in {}: {e}", path.display())))?;
        Ok(FileKeyCrypt { path, cipher })
    }

    /// The key file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn seal(&self, version: u8, plaintext: &str, aad: &[u8]) -> Result<Vec<u8>, CryptError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad,
                },
            )
            .map_err(|_| CryptError::Failed("AES-GCM encryption failed".into()))?;
        let mut out = Vec::with_capacity(1 + NONCE_LEN + sealed.len());
        out.push(version);
        out.extend_from_slice(&nonce);
        out.extend_from_slice(&sealed);
        Ok(out)
    }

    /// Decrypts the part after the format byte; `failed` says why authentication failed.
    fn open_sealed(
        &self,
        rest: &[u8],
        aad: &[u8],
        failed: impl FnOnce() -> CryptError,
    ) -> Result<Zeroizing<String>, CryptError> {
        if rest.len() < NONCE_LEN {
            return Err(CryptError::Failed("encrypted data is truncated".into()));
        }
        let (nonce, sealed) = rest.split_at(NONCE_LEN);
        let plain = self
            .cipher
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad })
            .map_err(|_| failed())?;
        match String::from_utf8(plain) {
            Ok(text) => Ok(Zeroizing::new(text)),
            Err(e) => {
                e.into_bytes().zeroize();
                Err(CryptError::Failed("decrypted data is not UTF-8".into()))
            }
        }
    }
}

fn read_key(path: &Path) -> Result<Option<Zeroizing<Vec<u8>>>, CryptError> {
    let file = match std::fs::File::open(path) {
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
    // One byte more than a key tells a longer file apart, and the buffer never grows (a
    // reallocation would leave an unwiped copy of the key behind).
    let mut key = Zeroizing::new(Vec::with_capacity(KEY_LEN + 1));
    file.take(KEY_LEN as u64 + 1)
        .read_to_end(&mut key)
        .map_err(|e| CryptError::Unavailable(format!("cannot read {}: {e}", path.display())))?;
    if key.len() != KEY_LEN {
        return Err(CryptError::Unavailable(format!(
            "key file {} is not {KEY_LEN} bytes long; it is not an agent-store key file",
            path.display(),
        )));
    }
    Ok(Some(key))
}

fn create_key(path: &Path) -> Result<Zeroizing<Vec<u8>>, CryptError> {
    let mut key = Zeroizing::new(vec![0u8; KEY_LEN]);
    OsRng
        .try_fill_bytes(&mut key[..])
        .map_err(|e| CryptError::Unavailable(format!("no randomness for a new key: {e}")))?;
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
    Ok(key)
}

impl Crypt for FileKeyCrypt {
    fn is_encryption_available(&self) -> bool {
        true
    }

    /// Format 1, not bound to any context.
    fn encrypt_string(&self, plaintext: &str) -> Result<Vec<u8>, CryptError> {
        self.seal(FORMAT_V1, plaintext, AAD_V1)
    }

    /// Format 1 only: format 2 needs its context ([`Crypt::decrypt_bound`]).
    fn decrypt_string(&self, ciphertext: &[u8]) -> Result<String, CryptError> {
        match ciphertext.split_first() {
            Some((&FORMAT_V1, rest)) => {
                let mut plain = self.open_sealed(rest, AAD_V1, not_ours)?;
                Ok(std::mem::take(&mut *plain))
            }
            Some((&FORMAT_V2, _)) => Err(CryptError::Failed(
                "this data is bound to a provider; decrypt it with decrypt_bound".into(),
            )),
            _ => Err(CryptError::Failed("not data encrypted by FileKeyCrypt".into())),
        }
    }

    /// Format 2: the context is part of AES-GCM's associated data.
    fn encrypt_bound(&self, plaintext: &str, context: &str) -> Result<Vec<u8>, CryptError> {
        check_context(context)?;
        self.seal(FORMAT_V2, plaintext, &aad_v2(context))
    }

    /// Format 2 for this context, or format 1 (stored before version 2 existed).
    fn decrypt_bound(&self, ciphertext: &[u8], context: &str) -> Result<Zeroizing<String>, CryptError> {
        match ciphertext.split_first() {
            Some((&FORMAT_V1, rest)) => unframe(self.open_sealed(rest, AAD_V1, not_ours)?, context),
            Some((&FORMAT_V2, rest)) => self.open_sealed(rest, &aad_v2(context), || {
                CryptError::Failed(format!(
                    "cannot decrypt the key stored for {context:?}: it was encrypted for another provider \
                     (moved from another row), with another key, or altered"
                ))
            }),
            _ => Err(CryptError::Failed("not data encrypted by FileKeyCrypt".into())),
        }
    }
}

fn not_ours() -> CryptError {
    CryptError::Failed("cannot decrypt: encrypted with another key, or altered".into())
}
