//! The key store: one API key per provider, encrypted through a `Crypt` written in JS.

use std::sync::Arc;
use std::time::Duration;

use agent_store::{Crypt, CryptError, KeyStore, KeyStoreError};
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi_derive::napi;
use serde_json::Value;

use crate::agent::NativeStore;
use crate::callbacks::Callback;
use crate::error::coded;

/// One request to the JS Crypt wrapper: `available`, `encrypt` (text) or `decrypt` (base64).
#[napi(object)]
pub struct CryptRequest {
    /// The operation.
    pub op: String,
    /// The plaintext (`encrypt`) or the base64 ciphertext (`decrypt`).
    pub data: Option<String>,
}

/// The JS wrapper's answer: `{ ok: value }` or `{ error: message, unavailable: bool }`.
#[napi(object)]
pub struct CryptReply {
    /// The answer: a boolean (`available`), base64 ciphertext (`encrypt`) or the plaintext
    /// (`decrypt`).
    #[napi(ts_type = "boolean | string")]
    pub ok: Option<Value>,
    /// Why the operation failed.
    pub error: Option<String>,
    /// Whether the failure means encryption cannot be used here.
    pub unavailable: Option<bool>,
}

type CryptFn = Callback<CryptRequest, CryptReply>;

/// A [`Crypt`] whose methods run in JavaScript. The trait is synchronous: each call blocks the
/// calling worker thread (never the JS thread) until JS answers.
struct JsCrypt(Arc<CryptFn>);

impl JsCrypt {
    fn ask(&self, op: &str, data: Option<String>) -> std::result::Result<Value, CryptError> {
        let (tx, rx) = std::sync::mpsc::channel::<Result<CryptReply>>();
        let request = CryptRequest {
            op: op.to_owned(),
            data,
        };
        let status = self
            .0
            .call_with_return_value(request, ThreadsafeFunctionCallMode::NonBlocking, move |r, _env| {
                let _ = tx.send(r);
                Ok(())
            });
        if status != Status::Ok {
            return Err(CryptError::Unavailable(format!(
                "the JS crypt could not be called ({status})"
            )));
        }
        let wait = move || rx.recv_timeout(Duration::from_secs(30));
        let answer = match tokio::runtime::Handle::try_current() {
            Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
                tokio::task::block_in_place(wait)
            }
            _ => wait(),
        };
        let reply = match answer {
            Ok(Ok(reply)) => reply,
            Ok(Err(e)) => return Err(CryptError::Failed(e.reason.clone())),
            Err(_) => return Err(CryptError::Unavailable("the JS crypt did not answer".into())),
        };
        if let Some(err) = reply.error {
            return Err(if reply.unavailable.unwrap_or(false) {
                CryptError::Unavailable(err)
            } else {
                CryptError::Failed(err)
            });
        }
        Ok(reply.ok.unwrap_or(Value::Null))
    }
}

impl Crypt for JsCrypt {
    fn is_encryption_available(&self) -> bool {
        matches!(self.ask("available", None), Ok(Value::Bool(true)))
    }

    fn encrypt_string(&self, plaintext: &str) -> std::result::Result<Vec<u8>, CryptError> {
        let v = self.ask("encrypt", Some(plaintext.to_owned()))?;
        let b64 = v
            .as_str()
            .ok_or_else(|| CryptError::Failed("encryptString must return bytes".into()))?;
        decode_b64(b64).ok_or_else(|| CryptError::Failed("encryptString returned malformed bytes".into()))
    }

    fn decrypt_string(&self, ciphertext: &[u8]) -> std::result::Result<String, CryptError> {
        let v = self.ask("decrypt", Some(encode_b64(ciphertext)))?;
        v.as_str()
            .map(str::to_owned)
            .ok_or_else(|| CryptError::Failed("decryptString must return a string".into()))
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn encode_b64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [chunk[0], *chunk.get(1).unwrap_or(&0), *chunk.get(2).unwrap_or(&0)];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

fn decode_b64(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len() / 4 * 3);
    let mut buf = 0u32;
    let mut bits = 0;
    for c in text.bytes().filter(|c| !c.is_ascii_whitespace() && *c != b'=') {
        let v = B64.iter().position(|x| *x == c)? as u32;
        buf = (buf << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((buf >> bits) as u8);
            buf &= (1 << bits) - 1;
        }
    }
    Some(out)
}

fn key_error(e: KeyStoreError) -> Error {
    let code = match &e {
        KeyStoreError::UnknownProvider { .. } | KeyStoreError::EmptyKey(_) => "invalid_argument",
        KeyStoreError::EncryptionUnavailable(_) => "encryption_unavailable",
        KeyStoreError::Crypt(_) => "crypt",
        _ => "store",
    };
    coded(code, e)
}

/// API keys, one per provider, encrypted in a SQLite store's database.
#[napi]
pub struct NativeKeyStore {
    inner: KeyStore,
}

#[napi]
impl NativeKeyStore {
    /// A key store over a SQLite store, encrypting through a JS crypt function.
    #[napi(
        factory,
        ts_args_type = "store: NativeStore, crypt: (request: CryptRequest) => CryptReply, providers?: string[]"
    )]
    pub fn create(
        store: &NativeStore,
        crypt: Function<'_, CryptRequest, CryptReply>,
        providers: Option<Vec<String>>,
    ) -> Result<Self> {
        let sqlite = store
            .sqlite
            .clone()
            .ok_or_else(|| coded("invalid_argument", "the key store needs a SqliteStore"))?;
        let tsfn: CryptFn = crypt.build_threadsafe_function().weak::<true>().build()?;
        let mut inner = KeyStore::new(sqlite, Arc::new(JsCrypt(Arc::new(tsfn))));
        if let Some(p) = providers {
            inner = inner.with_providers(p);
        }
        Ok(NativeKeyStore { inner })
    }

    /// The accepted providers.
    #[napi]
    pub fn providers(&self) -> Vec<String> {
        self.inner.providers().to_vec()
    }

    /// Encrypts and stores a provider's key.
    #[napi]
    pub async fn set_key(&self, provider: String, key: String) -> Result<()> {
        self.inner.set_key(&provider, &key).await.map_err(key_error)
    }

    /// A provider's key, decrypted (null when none is stored or it does not decrypt here).
    #[napi]
    pub async fn get_key(&self, provider: String) -> Result<Option<String>> {
        self.inner.get_key(&provider).await.map_err(key_error)
    }

    /// Which providers have a usable key (never the keys).
    #[napi(ts_return_type = "Promise<any[]>")]
    pub async fn status(&self) -> Result<crate::convert::Json> {
        let s = self.inner.status().await.map_err(key_error)?;
        Ok(crate::convert::js(&s))
    }

    /// Removes a provider's key.
    #[napi]
    pub async fn clear_key(&self, provider: String) -> Result<()> {
        self.inner.clear_key(&provider).await.map_err(key_error)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn base64_round_trips() {
        for data in [&b""[..], b"a", b"ab", b"abc", b"abcd", &[0, 255, 7, 128, 64]] {
            let e = encode_b64(data);
            assert_eq!(decode_b64(&e).unwrap(), data);
        }
        assert_eq!(encode_b64(b"hello"), "aGVsbG8=");
    }
}
