//! Certificates given with `--cacert` that a server presents as its own: trusted as that
//! server's identity (pinned), as curl does, whatever their names and constraints.
//!
//! CouchDB's documentation has users make a self-signed certificate with `openssl req
//! -new -x509`, which marks it as an authority (`CA:TRUE`) and often names no host in
//! subjectAltName; a strict check refuses it as a server's certificate. The user gave us
//! that very certificate, so when a server presents it byte for byte its name is not
//! checked; its dates are, and so are the handshake's signatures (the server proves it
//! holds the certificate's key). Any other certificate goes through the full check.

use std::sync::{Arc, Mutex};

use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, DistinguishedName, SignatureScheme};

/// The hosts that presented a pinned certificate in this process, as the header names them.
static PINNED_HOSTS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The hosts that have presented a certificate given in `--cacert` as their own.
pub fn pinned_hosts() -> Vec<String> {
    PINNED_HOSTS
        .lock()
        .map(|hosts| hosts.clone())
        .unwrap_or_default()
}

/// The full check, except for a server that presents exactly one of `pinned`.
#[derive(Debug)]
pub struct PinnedOrVerified {
    pub pinned: Vec<CertificateDer<'static>>,
    pub verified: Arc<WebPkiServerVerifier>,
}

impl PinnedOrVerified {
    fn is_pinned(&self, end_entity: &CertificateDer<'_>) -> bool {
        self.pinned
            .iter()
            .any(|given| given.as_ref() == end_entity.as_ref())
    }
}

/// Whether a failed full check still leaves a pinned certificate good: everything but its
/// dates is the user's word. The end entity's dates are checked before anything else.
fn outweighed_by_pin(error: &rustls::Error) -> bool {
    !matches!(
        error,
        rustls::Error::InvalidCertificate(
            CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. }
        )
    )
}

fn remember(server_name: &ServerName<'_>) {
    let host = server_name.to_str().into_owned();
    if let Ok(mut hosts) = PINNED_HOSTS.lock()
        && !hosts.contains(&host)
    {
        hosts.push(host);
    }
}

impl ServerCertVerifier for PinnedOrVerified {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        let checked = self.verified.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match checked {
            Err(error) if self.is_pinned(end_entity) && outweighed_by_pin(&error) => {
                remember(server_name);
                Ok(ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verified.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.verified.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.verified.supported_verify_schemes()
    }

    fn root_hint_subjects(&self) -> Option<&[DistinguishedName]> {
        self.verified.root_hint_subjects()
    }
}
