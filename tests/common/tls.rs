//! Certificates made in the test (a private CA, server certificates right and wrong, a
//! client certificate) and a TLS front, Node's own TLS, in front of a plain server.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, IsCa, KeyPair, date_time_ymd,
};

use super::{die_with_parent, free_port, repository};

/// PEM files in a folder: the CA, and a certificate with its key for each use.
pub struct Pki {
    pub dir: PathBuf,
}

/// The server certificates the tests need.
#[derive(Clone, Copy)]
pub enum ServerCert {
    /// For `localhost` and `127.0.0.1`, valid now.
    Good,
    /// For `elsewhere.example` only.
    WrongName,
    /// For `localhost` and `127.0.0.1`, expired in 2021.
    Expired,
    /// Signed by the CA, `CN=localhost`, no subjectAltName.
    NoSubjectAltName,
    /// Self-signed as `openssl req -x509 -newkey ... -nodes -subj /CN=localhost` makes it:
    /// `CA:TRUE`, `CN=localhost`, no subjectAltName.
    OpensslDefault,
    /// Self-signed as CouchDB's documentation has it made (`openssl req -new -x509 -key
    /// privkey.pem -out couchdb.pem -days 1095`, the prompts' defaults taken): `CA:TRUE`,
    /// OpenSSL's default subject (no CN), no subjectAltName.
    CouchDbDocs,
    /// Self-signed like `OpensslDefault`, but never given to the client.
    OtherSelfSigned,
    /// Self-signed like `OpensslDefault`, expired in 2021.
    ExpiredSelfSigned,
}

impl ServerCert {
    fn stem(self) -> &'static str {
        match self {
            ServerCert::Good => "server",
            ServerCert::WrongName => "wrong-name",
            ServerCert::Expired => "expired",
            ServerCert::NoSubjectAltName => "no-san",
            ServerCert::OpensslDefault => "openssl-default",
            ServerCert::CouchDbDocs => "couchdb-docs",
            ServerCert::OtherSelfSigned => "other-self-signed",
            ServerCert::ExpiredSelfSigned => "expired-self-signed",
        }
    }
}

impl Pki {
    /// Makes the CA and every certificate under `dir`.
    pub fn make(dir: &Path) -> Pki {
        let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
        ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca_params
            .distinguished_name
            .push(DnType::CommonName, "sofabench test CA");
        let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().unwrap()).unwrap();
        std::fs::write(dir.join("ca.pem"), ca.pem()).unwrap();
        let leaf = |names: &[&str], stem: &str, expired: bool| {
            let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
            let common_name = if names.is_empty() { "localhost" } else { stem };
            let mut params = CertificateParams::new(names).unwrap();
            params
                .distinguished_name
                .push(DnType::CommonName, common_name);
            if expired {
                params.not_before = date_time_ymd(2020, 1, 1);
                params.not_after = date_time_ymd(2021, 1, 1);
            }
            let key = KeyPair::generate().unwrap();
            let cert = params.signed_by(&key, &ca).unwrap();
            std::fs::write(dir.join(format!("{stem}.pem")), cert.pem()).unwrap();
            std::fs::write(dir.join(format!("{stem}-key.pem")), key.serialize_pem()).unwrap();
        };
        leaf(&["localhost", "127.0.0.1"], "server", false);
        leaf(&["elsewhere.example"], "wrong-name", false);
        leaf(&["localhost", "127.0.0.1"], "expired", true);
        leaf(&["sofabench-client"], "client", false);
        leaf(&[], "no-san", false);
        let localhost = [(DnType::CommonName, "localhost")];
        let openssl_prompts = [
            (DnType::CountryName, "AU"),
            (DnType::StateOrProvinceName, "Some-State"),
            (DnType::OrganizationName, "Internet Widgits Pty Ltd"),
        ];
        self_signed(dir, "openssl-default", &localhost, false);
        self_signed(dir, "couchdb-docs", &openssl_prompts, false);
        self_signed(dir, "other-self-signed", &localhost, false);
        self_signed(dir, "expired-self-signed", &localhost, true);
        Pki {
            dir: dir.to_path_buf(),
        }
    }

    pub fn ca(&self) -> String {
        self.path("ca.pem")
    }

    /// The PEM file of a server certificate.
    pub fn cert(&self, cert: ServerCert) -> String {
        self.path(&format!("{}.pem", cert.stem()))
    }

    pub fn client(&self) -> (String, String) {
        (self.path("client.pem"), self.path("client-key.pem"))
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// A self-signed certificate as `openssl req -x509` makes it: an authority (`CA:TRUE`),
/// the subject `subject`, no subjectAltName; written to `dir/{stem}.pem` with its key.
fn self_signed(dir: &Path, stem: &str, subject: &[(DnType, &str)], expired: bool) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    for (kind, value) in subject {
        params.distinguished_name.push(kind.clone(), *value);
    }
    if expired {
        params.not_before = date_time_ymd(2020, 1, 1);
        params.not_after = date_time_ymd(2021, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    std::fs::write(dir.join(format!("{stem}.pem")), cert.pem()).unwrap();
    std::fs::write(dir.join(format!("{stem}-key.pem")), key.serialize_pem()).unwrap();
}

/// Node's TLS in front of a plain server on `backend_port`; stopped when dropped.
pub struct TlsFront {
    child: Child,
    pub port: u16,
}

impl TlsFront {
    /// Serves `cert`; with `client_ca`, only to clients with a certificate it signed.
    pub fn start(pki: &Pki, cert: ServerCert, backend_port: u16, client_ca: bool) -> TlsFront {
        let stem = cert.stem();
        let (cert, key) = (
            pki.path(&format!("{stem}.pem")),
            pki.path(&format!("{stem}-key.pem")),
        );
        let client_ca = client_ca.then(|| pki.ca());
        TlsFront::serving(&cert, &key, backend_port, client_ca.as_deref())
    }

    /// Serves the certificate in the PEM file `cert` with its key in `key`.
    pub fn serving(cert: &str, key: &str, backend_port: u16, client_ca: Option<&str>) -> TlsFront {
        let port = free_port();
        let mut command = Command::new("node");
        command
            .arg(repository().join("tests/fixtures/tls-front.js"))
            .arg(port.to_string())
            .arg(backend_port.to_string())
            .arg(cert)
            .arg(key);
        if let Some(ca) = client_ca {
            command.arg(ca);
        }
        command.stdout(Stdio::null()).stderr(Stdio::null());
        die_with_parent(&mut command);
        let child = command.spawn().expect("start node for the TLS front");
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "the TLS front did not come up");
            std::thread::sleep(Duration::from_millis(50));
        }
        TlsFront { child, port }
    }
}

impl Drop for TlsFront {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
