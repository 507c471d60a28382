//! TLS for `https://` nodes: the client configuration built once from the flags, and the
//! verifier `--insecure` puts in place of the real one.
//!
//! rustls with the *ring* provider: it builds with a C compiler alone, and its AES-GCM
//! and ChaCha20 are the same assembly OpenSSL's wrk uses. Sessions are resumed (rustls's
//! default cache), so a reconnect costs an abbreviated handshake, as in a browser.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::{CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
use rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme,
};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use super::TransportError;
use super::pinned::PinnedOrVerified;
use crate::files::{self, Kind};

/// What the user chose for TLS: `--cacert`, `--insecure`, `--cert` and `--key`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TlsSettings {
    /// Certificates (PEM) of the authorities trusted instead of the system's store.
    pub cacert: Option<PathBuf>,
    /// Accept any certificate: no check of who the server is.
    pub insecure: bool,
    /// A client certificate chain and its private key (PEM), for mutual TLS.
    pub client_identity: Option<(PathBuf, PathBuf)>,
}

/// The client configuration every `https://` connection of a run shares.
pub fn client_config(settings: &TlsSettings) -> Result<Arc<ClientConfig>, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?;
    let builder = if settings.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AcceptAnyCertificate {
                algorithms: provider.signature_verification_algorithms,
            }))
    } else {
        builder
            .dangerous()
            .with_custom_certificate_verifier(verifier(settings.cacert.as_deref(), provider)?)
    };
    let mut config = match &settings.client_identity {
        None => builder.with_no_client_auth(),
        Some((cert, key)) => {
            let chain = certificates(cert, "--cert")?;
            let key = private_key(key)?;
            builder.with_client_auth_cert(chain, key).map_err(|e| {
                format!(
                    "--cert {} and --key: {e}; give the key that belongs to the certificate",
                    cert.display()
                )
            })?
        }
    };
    // Say HTTP/1.1 outright, so that a server offering HTTP/2 does not pick it.
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The full check (rustls's WebPki verifier) against the authorities in `--cacert`, or the
/// system's trust store without it; a certificate in `--cacert` is also pinned.
fn verifier(
    cacert: Option<&Path>,
    provider: Arc<CryptoProvider>,
) -> Result<Arc<dyn ServerCertVerifier>, String> {
    let given = match cacert {
        Some(path) => certificates(path, "--cacert")?,
        None => Vec::new(),
    };
    let roots = trusted_roots(cacert, &given)?;
    let verified = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider)
        .build()
        .map_err(|e| format!("TLS cannot be set up: {e}"))?;
    if given.is_empty() {
        return Ok(verified);
    }
    Ok(Arc::new(PinnedOrVerified {
        pinned: given,
        verified,
    }))
}

/// The authorities in `--cacert` (`given`, read from `cacert`), or the system's trust
/// store without it.
fn trusted_roots(
    cacert: Option<&Path>,
    given: &[CertificateDer<'static>],
) -> Result<RootCertStore, String> {
    let mut roots = RootCertStore::empty();
    if let Some(path) = cacert {
        for certificate in given {
            roots.add(certificate.clone()).map_err(|e| {
                format!(
                    "--cacert {}: a certificate in it cannot be a trust anchor ({e}); give the PEM certificate of the authority that signed the server's",
                    path.display()
                )
            })?;
        }
        return Ok(roots);
    }
    let found = rustls_native_certs::load_native_certs();
    let (added, _unparsable) = roots.add_parsable_certificates(found.certs);
    if added == 0 {
        return Err(
            "https://: the system has no trusted certificates (on Debian, install the ca-certificates package); or give --cacert FILE with the authority that signed the server's certificate"
                .to_string(),
        );
    }
    Ok(roots)
}

/// The certificates in a PEM file; at least one.
fn certificates(path: &Path, flag: &str) -> Result<Vec<CertificateDer<'static>>, String> {
    let pem = files::read(path, Kind::Pem).map_err(|e| format!("{flag}: {e}"))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| {
            format!(
                "{flag} {}: not a PEM certificate file ({e}); give certificates in PEM form (-----BEGIN CERTIFICATE-----)",
                path.display()
            )
        })?;
    if certificates.is_empty() {
        return Err(format!(
            "{flag} {}: holds no certificate; give certificates in PEM form (-----BEGIN CERTIFICATE-----)",
            path.display()
        ));
    }
    Ok(certificates)
}

/// The first private key in a PEM file (PKCS#8, PKCS#1 or SEC1).
fn private_key(path: &Path) -> Result<PrivateKeyDer<'static>, String> {
    let pem = files::read(path, Kind::Pem).map_err(|e| format!("--key: {e}"))?;
    PrivateKeyDer::from_pem_slice(&pem).map_err(|e| {
        format!(
            "--key {}: no private key in it ({e}); give the client certificate's key in PEM form (-----BEGIN PRIVATE KEY-----)",
            path.display()
        )
    })
}

/// The name a node's certificate must carry: its host name (also sent as SNI) or its IP
/// address (checked against the certificate's IP addresses, with no SNI).
pub fn server_name(host: &str) -> Result<ServerName<'static>, String> {
    ServerName::try_from(host.to_string()).map_err(|e| {
        format!("--database_address: {host:?} cannot be checked against a certificate ({e})")
    })
}

/// `--insecure`: any certificate is taken for the server's. The handshake's signatures are
/// still checked, so the connection is at least encrypted to whoever holds the key.
#[derive(Debug)]
struct AcceptAnyCertificate {
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for AcceptAnyCertificate {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

/// What connecting to one `https://` node takes: the run's configuration and the name
/// its certificate must carry.
#[derive(Clone)]
pub struct NodeTls {
    connector: TlsConnector,
    server_name: ServerName<'static>,
}

impl NodeTls {
    pub fn new(config: Arc<ClientConfig>, host: &str) -> Result<NodeTls, String> {
        Ok(NodeTls {
            connector: TlsConnector::from(config),
            server_name: server_name(host)?,
        })
    }

    /// Shakes hands over `tcp`; a failure says what was wrong and what to do about it.
    pub async fn handshake(&self, tcp: TcpStream) -> Result<TlsStream<TcpStream>, TransportError> {
        self.connector
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(TransportError::Handshake)
    }
}

impl fmt::Debug for NodeTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "NodeTls({:?})", self.server_name)
    }
}

/// What to do about a TLS failure, from rustls's reason; `None` when `error` is not one.
/// A server that wants a client certificate may say so only after the client's side of
/// the handshake (TLS 1.3), so a broken connection can carry the reason too.
pub fn remedy(error: &io::Error) -> Option<&'static str> {
    let reason = error
        .get_ref()
        .and_then(|inner| inner.downcast_ref::<rustls::Error>())?;
    Some(match reason {
        rustls::Error::InvalidCertificate(why) => match why {
            CertificateError::NotValidForNameContext { presented, .. } if presented.is_empty() => {
                "the server's certificate names no host in subjectAltName, and host names are checked there only (not in the subject's CN); make it with one (openssl req ... -addext subjectAltName=DNS:HOST), give that very certificate in --cacert to pin it as the server's, or --insecure to skip verification"
            }
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the certificate is not for this host name; connect by the name the certificate carries, or give --insecure to skip verification"
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired; renew it, or give --insecure to skip verification"
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet; check the clocks, or give --insecure to skip verification"
            }
            _ => {
                "the server's certificate is not trusted; give --cacert FILE with the authority that signed it (or with the server's own certificate, to pin it), or --insecure to skip verification"
            }
        },
        rustls::Error::AlertReceived(_) => {
            "the server refused the TLS session; if it asks for a client certificate, give --cert and --key"
        }
        _ => "check that the address is an https:// server (and not plain http://)",
    })
}
