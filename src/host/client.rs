//! This machine and the sofabench on it, as a result records them
//! ([`ClientEnvironment`]): a comparison of two runs can then say the client changed.
//! Read from Linux's files; a file that is missing or unreadable (another system, a
//! container without /proc) leaves its fact out, never fails the run.

use crate::results::environment::{ClientEnvironment, bounded};

/// The environment of this process, which runs on `threads` worker threads.
pub fn capture(threads: usize) -> ClientEnvironment {
    let read = |path: &str| std::fs::read_to_string(path).ok();
    let os_release = read("/etc/os-release").or_else(|| read("/usr/lib/os-release"));
    ClientEnvironment {
        sofabench: env!("CARGO_PKG_VERSION").to_string(),
        commit: option_env!("SOFABENCH_COMMIT").map(bounded),
        profile: option_env!("SOFABENCH_PROFILE").map(bounded),
        os: os_release.as_deref().and_then(pretty_name),
        kernel: kernel(
            read("/proc/sys/kernel/ostype").as_deref(),
            read("/proc/sys/kernel/osrelease").as_deref(),
        ),
        cpu: read("/proc/cpuinfo").as_deref().and_then(cpu_model),
        cores: Some(crate::cpu::machine_cores() as u64),
        threads: Some(threads as u64),
        load_average: read("/proc/loadavg").as_deref().and_then(load_average),
    }
}

/// os-release's `PRETTY_NAME`, its shell quotes taken off (`"Debian GNU/Linux 12
/// (bookworm)"`).
fn pretty_name(os_release: &str) -> Option<String> {
    let value = os_release
        .lines()
        .find_map(|l| l.trim().strip_prefix("PRETTY_NAME="))?
        .trim();
    let unquoted = ['"', '\'']
        .iter()
        .find_map(|q| value.strip_prefix(*q)?.strip_suffix(*q))
        .unwrap_or(value);
    let unescaped = unquoted.replace("\\\"", "\"").replace("\\\\", "\\");
    known(&unescaped)
}

/// The kernel's name and release, `Linux 6.1.0-18-amd64`; the release alone where the
/// name is not given.
fn kernel(ostype: Option<&str>, osrelease: Option<&str>) -> Option<String> {
    let release = osrelease.map(str::trim).filter(|r| !r.is_empty())?;
    match ostype.map(str::trim).filter(|t| !t.is_empty()) {
        Some(name) => known(&format!("{name} {release}")),
        None => known(release),
    }
}

/// The first processor's model in /proc/cpuinfo: x86's `model name`; where that is not
/// given (ARM), its `Hardware` or `Processor` line, or else its implementer and part
/// numbers, which name the core as exactly.
fn cpu_model(cpuinfo: &str) -> Option<String> {
    let field = |name: &str| {
        cpuinfo.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name)
                .then(|| value.trim())
                .filter(|v| !v.is_empty())
        })
    };
    if let Some(model) = ["model name", "Hardware", "Processor"]
        .iter()
        .find_map(|name| field(name))
    {
        return known(model);
    }
    let (implementer, part) = (field("CPU implementer")?, field("CPU part")?);
    known(&format!("CPU implementer {implementer}, part {part}"))
}

/// The 1-minute load average, the first figure of /proc/loadavg.
fn load_average(loadavg: &str) -> Option<f64> {
    let load: f64 = loadavg.split_whitespace().next()?.parse().ok()?;
    (load.is_finite() && load >= 0.0).then_some(load)
}

/// `text` bounded, its runs of spaces made one (cpuinfo pads its model names); `None`
/// when empty.
fn known(text: &str) -> Option<String> {
    let text = text.split_whitespace().collect::<Vec<_>>().join(" ");
    (!text.is_empty()).then(|| bounded(&text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::environment::MOST_TEXT;

    #[test]
    fn the_pretty_name_is_read_quoted_or_not() {
        let debian = "PRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\nNAME=\"Debian GNU/Linux\"\nVERSION_ID=\"12\"\n";
        assert_eq!(
            pretty_name(debian).as_deref(),
            Some("Debian GNU/Linux 12 (bookworm)")
        );
        assert_eq!(
            pretty_name("ID=alpine\nPRETTY_NAME='Alpine Linux v3.20'\n").as_deref(),
            Some("Alpine Linux v3.20")
        );
        assert_eq!(
            pretty_name("PRETTY_NAME=Arch\\ Linux").as_deref(),
            Some("Arch\\ Linux")
        );
        assert_eq!(
            pretty_name("PRETTY_NAME=\"say \\\"hi\\\"\"").as_deref(),
            Some("say \"hi\"")
        );
        assert_eq!(pretty_name("NAME=\"Debian\"\n"), None);
        assert_eq!(pretty_name("PRETTY_NAME=\"\"\n"), None);
    }

    #[test]
    fn the_kernel_is_its_name_and_release() {
        assert_eq!(
            kernel(Some("Linux\n"), Some("6.1.0-18-amd64\n")).as_deref(),
            Some("Linux 6.1.0-18-amd64")
        );
        assert_eq!(kernel(None, Some("6.1.0\n")).as_deref(), Some("6.1.0"));
        assert_eq!(kernel(Some("Linux\n"), None), None);
        assert_eq!(kernel(Some("Linux"), Some("  \n")), None);
    }

    #[test]
    fn the_cpu_model_is_x86s_model_name_or_arms_numbers() {
        let x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\nflags\t\t: fpu\n\nprocessor\t: 1\nmodel name\t: Other\n";
        assert_eq!(
            cpu_model(x86).as_deref(),
            Some("Intel(R) Xeon(R) CPU @ 2.20GHz")
        );
        let graviton = "processor\t: 0\nBogoMIPS\t: 243.75\nFeatures\t: fp asimd\nCPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd0c\nCPU revision\t: 1\n";
        assert_eq!(
            cpu_model(graviton).as_deref(),
            Some("CPU implementer 0x41, part 0xd0c")
        );
        let raspberry =
            "processor\t: 0\nCPU part\t: 0xd08\nCPU implementer\t: 0x41\n\nHardware\t: BCM2835\n";
        assert_eq!(cpu_model(raspberry).as_deref(), Some("BCM2835"));
        let padded = "model name\t:   AMD   EPYC 7B13  \n";
        assert_eq!(cpu_model(padded).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(cpu_model("processor\t: 0\nmodel name\t:\n"), None);
        assert_eq!(cpu_model(""), None);
    }

    #[test]
    fn the_load_average_is_the_first_figure() {
        assert_eq!(load_average("0.42 0.30 0.25 2/345 6789\n"), Some(0.42));
        assert_eq!(load_average(""), None);
        assert_eq!(load_average("nan 1 1"), None);
        assert_eq!(load_average("-1 0 0"), None);
    }

    #[test]
    fn a_long_model_is_bounded() {
        let cpuinfo = format!("model name\t: {}\n", "x".repeat(MOST_TEXT * 2));
        let model = cpu_model(&cpuinfo).unwrap();
        assert_eq!(model.chars().count(), MOST_TEXT + 1);
    }

    #[test]
    fn this_machine_is_captured() {
        let client = capture(3);
        assert_eq!(client.sofabench, env!("CARGO_PKG_VERSION"));
        assert_eq!(client.threads, Some(3));
        assert_eq!(client.cores, Some(crate::cpu::machine_cores() as u64));
        assert!(client.profile.is_some(), "build.rs sets the profile");
        if std::path::Path::new("/proc/loadavg").exists() {
            assert!(client.load_average.is_some());
            assert!(client.kernel.is_some());
        }
    }
}
