//! A loopback https server with a certificate made in the test, for page_scrape's address
//! policy: `/redirect?to=<url>` answers 302 to that URL, anything else a small HTML page.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A running server.
pub struct TlsServer {
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// Its certificate (PEM): trust it as an extra root.
    pub cert_pem: String,
    /// Connections accepted so far.
    pub hits: Arc<AtomicUsize>,
}

impl TlsServer {
    /// `https://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }

    /// Connections accepted so far (a refused address must leave this unchanged).
    pub fn hits(&self) -> usize {
        self.hits.load(Ordering::SeqCst)
    }
}

/// Starts a server for the names `localhost`, `127.0.0.1` and `loop.test` on the shared
/// runtime.
pub fn start() -> TlsServer {
    let names = vec![
        "localhost".to_string(),
        "127.0.0.1".to_string(),
        "loop.test".to_string(),
    ];
    let key = rcgen::generate_simple_self_signed(names).expect("certificate");
    let cert_pem = key.cert.pem();
    let der = CertificateDer::from(key.cert.der().to_vec());
    let pk = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.signing_key.serialize_der()));
    let provider = Arc::new(tokio_rustls::rustls::crypto::aws_lc_rs::default_provider());
    let config = ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("protocol versions")
        .with_no_client_auth()
        .with_single_cert(vec![der], pk)
        .expect("server config");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = super::rt()
        .block_on(tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0))))
        .expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let hits = Arc::new(AtomicUsize::new(0));
    let counter = hits.clone();
    super::rt().spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            counter.fetch_add(1, Ordering::SeqCst);
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                let Ok(mut tls) = acceptor.accept(tcp).await else { return };
                let mut head = Vec::new();
                let mut buf = [0u8; 1024];
                while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                    match tls.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => head.extend_from_slice(&buf[..n]),
                    }
                }
                let head = String::from_utf8_lossy(&head);
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_string();
                let reply = match path.strip_prefix("/redirect?to=") {
                    Some(to) => format!(
                        "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                    ),
                    None => {
                        let body = "<html><body><h1>Served over TLS</h1><p>Loopback only.</p></body></html>";
                        format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                };
                let _ = tls.write_all(reply.as_bytes()).await;
                let _ = tls.shutdown().await;
            });
        }
    });
    TlsServer { port, cert_pem, hits }
}
