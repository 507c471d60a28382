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
}

impl ServerCert {
    fn stem(self) -> &'static str {
        match self {
            ServerCert::Good => "server",
            ServerCert::WrongName => "wrong-name",
            ServerCert::Expired => "expired",
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
            let mut params = CertificateParams::new(names).unwrap();
            params.distinguished_name.push(DnType::CommonName, stem);
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
        Pki {
            dir: dir.to_path_buf(),
        }
    }

    pub fn ca(&self) -> String {
        self.path("ca.pem")
    }

    pub fn client(&self) -> (String, String) {
        (self.path("client.pem"), self.path("client-key.pem"))
    }

    pub fn path(&self, name: &str) -> String {
        self.dir.join(name).display().to_string()
    }
}

/// Node's TLS in front of a plain server on `backend_port`; stopped when dropped.
pub struct TlsFront {
    child: Child,
    pub port: u16,
}

impl TlsFront {
    /// Serves `cert`; with `client_ca`, only to clients with a certificate it signed.
    pub fn start(pki: &Pki, cert: ServerCert, backend_port: u16, client_ca: bool) -> TlsFront {
        let port = free_port();
        let stem = cert.stem();
        let mut command = Command::new("node");
        command
            .arg(repository().join("tests/fixtures/tls-front.js"))
            .arg(port.to_string())
            .arg(backend_port.to_string())
            .arg(pki.path(&format!("{stem}.pem")))
            .arg(pki.path(&format!("{stem}-key.pem")));
        if client_ca {
            command.arg(pki.ca());
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
