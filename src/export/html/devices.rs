//! A phase's devices on the page: whether they converged, then the figures as the
//! report prints them, so the page and the terminal say the same words.

use std::fmt::Write as _;

use super::markup::escape;
use crate::results::PhaseResult;

pub fn devices_section(out: &mut String, phase: &PhaseResult) {
    let Some(devices) = &phase.devices else {
        return;
    };
    let check = &devices.convergence;
    let apart = check.checked.saturating_sub(check.converged);
    let _ = writeln!(out, "<h3>Devices</h3>");
    let (class, said) = if apart == 0 && check.error.is_none() {
        (
            "muted",
            format!(
                "{} of {} devices converged with the server.",
                check.converged, check.checked
            ),
        )
    } else {
        (
            "warn",
            format!(
                "{apart} of {} devices did not converge with the server.",
                check.checked
            ),
        )
    };
    let _ = writeln!(out, "<p class=\"{class}\">{}</p>", escape(&said));
    let lines = crate::report::devices::lines(phase);
    let _ = writeln!(out, "<pre class=\"mono\">{}</pre>", escape(&lines));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_says_whether_the_devices_converged_and_shows_their_figures() {
        let mut phase = PhaseResult::of_operations("fleet", 1.0, vec![]);
        let mut out = String::new();
        devices_section(&mut out, &phase);
        assert!(out.is_empty(), "no devices, no section");
        phase.devices = Some(crate::results::devices::sample(5));
        devices_section(&mut out, &phase);
        assert!(out.contains("5 of 5 devices converged"), "{out}");
        assert!(out.contains("time to visible"), "{out}");
        out.clear();
        phase.devices = Some(crate::results::devices::sample(3));
        devices_section(&mut out, &phase);
        assert!(
            out.contains("<p class=\"warn\">2 of 5 devices did not converge"),
            "{out}"
        );
    }
}
