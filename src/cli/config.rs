//! `--config FILE`: every flag of `run` can come from a file instead, TOML or JSON (as the
//! Aerospike benchmark's `config.json`). Keys are the flags' names without dashes, in
//! either spelling (`num_connections` or `num-connections`). Flags on the command line
//! override the file: its entries are placed before them, and a later flag wins.

use std::ffi::OsString;
use std::path::Path;

use clap::CommandFactory;

use super::Cli;
use crate::exit::Failed;
use crate::files::{self, Kind};

/// The most values one key takes (thresholds, batch sizes): a run has at most 1,000
/// phases, and a longer array would only fill memory while the command line is parsed.
const MOST_VALUES: usize = 1_000;

/// Where `--config` is, if anywhere: its value, and the range of arguments it takes.
fn find_config(args: &[OsString]) -> Option<(OsString, std::ops::Range<usize>)> {
    for (i, arg) in args.iter().enumerate() {
        let text = arg.to_string_lossy();
        if text == "--config" {
            return args.get(i + 1).map(|v| (v.clone(), i..i + 2));
        }
        if let Some(value) = text.strip_prefix("--config=") {
            return Some((OsString::from(value), i..i + 1));
        }
    }
    None
}

/// What a flag takes after its name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Takes {
    /// A switch: `--reuse`.
    Nothing,
    /// `--num_connections=4`.
    Value,
    /// Either: `--retry-429` or `--retry-429=5`.
    OptionalValue,
}

/// The long names (and aliases) `run` accepts, with what each takes and whether it may
/// be given several times (`--threshold`).
fn run_flags() -> Vec<(String, Takes, bool)> {
    let command = Cli::command();
    let Some(run) = command.find_subcommand("run") else {
        return Vec::new();
    };
    run.get_arguments()
        .filter(|a| a.get_id() != "config")
        .flat_map(|a| {
            let optional = a.get_num_args().is_some_and(|n| n.min_values() == 0);
            let takes = match a.get_action().takes_values() {
                false => Takes::Nothing,
                true if optional => Takes::OptionalValue,
                true => Takes::Value,
            };
            let repeatable = matches!(a.get_action(), clap::ArgAction::Append);
            a.get_long()
                .into_iter()
                .chain(a.get_all_aliases().into_iter().flatten())
                .map(move |name| (name.to_string(), takes, repeatable))
        })
        .collect()
}

/// One entry of the file as a command-line argument, or `None` for a `false` switch.
/// A flag whose value is optional takes `true` or `false` as a switch does.
fn as_argument(
    key: &str,
    value: &toml::Value,
    takes: Takes,
    file: &str,
) -> Result<Option<String>, Failed> {
    let takes_value = takes != Takes::Nothing;
    let text = match value {
        toml::Value::String(s) => s.clone(),
        toml::Value::Integer(n) => n.to_string(),
        toml::Value::Float(x) => x.to_string(),
        toml::Value::Boolean(b) if takes != Takes::Value => {
            return Ok(b.then(|| format!("--{key}")));
        }
        toml::Value::Array(items) if takes_value => items
            .iter()
            .map(|v| match v {
                toml::Value::String(s) => Ok(s.clone()),
                other => Ok(other.to_string()),
            })
            .collect::<Result<Vec<_>, Failed>>()?
            .join(","),
        other => {
            let wanted = if takes_value {
                "a value"
            } else {
                "true or false"
            };
            return Err(Failed::bad_input(format!(
                "{file}: key {key:?} has {} {other}; give it {wanted}",
                other.type_str()
            )));
        }
    };
    if !takes_value {
        return Err(Failed::bad_input(format!(
            "{file}: key {key:?} is a switch; give it true or false"
        )));
    }
    Ok(Some(format!("--{key}={text}")))
}

fn read_file(path: &Path) -> Result<toml::Table, Failed> {
    let file = path.display().to_string();
    let text =
        files::read_text(path, Kind::Config).map_err(|e| Failed::bad_input(e.to_string()))?;
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if is_json {
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Failed::bad_input(format!(
                "{file}:{}:{}: not valid JSON: {e}; fix the file",
                e.line(),
                e.column()
            ))
        })?;
        let toml_value: toml::Value = serde_json::from_value(json).map_err(|e| {
            Failed::bad_input(format!(
                "{file}: {e}; the file must be one JSON object of flag names and values (no nulls)"
            ))
        })?;
        match toml_value {
            toml::Value::Table(table) => Ok(table),
            _ => Err(Failed::bad_input(format!(
                "{file}: the file must be one JSON object of flag names and values"
            ))),
        }
    } else {
        text.parse::<toml::Table>().map_err(|e| {
            Failed::bad_input(format!(
                "{file}: not valid TOML: {}; fix the file",
                e.to_string().trim()
            ))
        })
    }
}

/// The entries of a table (a config file, or a scenario file's settings) as flags.
fn flags_from_table(table: &toml::Table, file: &str) -> Result<Vec<OsString>, Failed> {
    let flags = run_flags();
    let mut from_file = Vec::new();
    for (key, value) in table {
        let Some((name, takes, repeatable)) = flags.iter().find(|(name, ..)| name == key) else {
            let closest = flags
                .iter()
                .map(|(name, ..)| (strsim::levenshtein(name, key), name))
                .min();
            let hint = closest.map_or(String::new(), |(_, name)| {
                format!("; did you mean {name:?}?")
            });
            return Err(Failed::bad_input(format!(
                "{file}: unknown key {key:?}{hint}"
            )));
        };
        if let toml::Value::Array(items) = value
            && items.len() > MOST_VALUES
        {
            return Err(Failed::bad_input(format!(
                "{file}: key {key:?} has {} values: at most {MOST_VALUES}; give fewer",
                items.len()
            )));
        }
        // A flag given several times takes an array of values, one flag each.
        let values = match value {
            toml::Value::Array(items) if *repeatable => items.iter().collect(),
            _ => vec![value],
        };
        for value in values {
            if let Some(argument) = as_argument(name, value, *takes, file)? {
                from_file.push(OsString::from(argument));
            }
        }
    }
    Ok(from_file)
}

/// A scenario file's top-level settings (`database_address`, `json_document_schema_filename`,
/// …: any flag of `run`) as flags, placed before every other flag so that a config file
/// and the command line win over them.
pub fn expand_scenario(mut args: Vec<OsString>) -> Result<Vec<OsString>, Failed> {
    if args.get(1).is_none_or(|a| a != "run") {
        return Ok(args);
    }
    let named = args.iter().enumerate().find_map(|(i, a)| {
        let text = a.to_string_lossy();
        if text == "--scenario" {
            args.get(i + 1).cloned()
        } else {
            text.strip_prefix("--scenario=").map(OsString::from)
        }
    });
    let Some(path) = named.map(std::path::PathBuf::from) else {
        return Ok(args);
    };
    // A pipe (`-`, `<(…)`) is read here too: the loader gets the same text again.
    if crate::scenario::builtin(&path.to_string_lossy()).is_some() {
        return Ok(args);
    }
    let file = path.display().to_string();
    // A file that cannot be read is the scenario loader's to report, with the same words.
    let Ok(text) = files::read_text(&path, Kind::Scenario) else {
        return Ok(args);
    };
    // Syntax errors are the scenario parser's to report, with the phase they are in.
    let Ok(mut table) = text.parse::<toml::Table>() else {
        return Ok(args);
    };
    table.remove("description");
    table.remove("phase");
    table.remove("query");
    // The settings phases take stay with the scenario, under the flags the user gives.
    table.retain(|key, _| !crate::scenario::file::SETTING_KEYS.contains(&key));
    let settings = flags_from_table(&table, &file)?;
    args.splice(2..2, settings);
    Ok(args)
}

/// Replaces `--config FILE` in `args` by the file's entries as flags.
pub fn expand(args: Vec<OsString>) -> Result<Vec<OsString>, Failed> {
    let Some((path, range)) = find_config(&args) else {
        return Ok(args);
    };
    let path = Path::new(&path);
    let file = path.display().to_string();
    let table = read_file(path)?;
    let from_file = flags_from_table(&table, &file)?;
    let mut expanded: Vec<OsString> = args[..range.start].to_vec();
    expanded.extend(from_file);
    expanded.extend_from_slice(&args[range.end..]);
    Ok(expanded)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand_with(file_name: &str, content: &str, args: &[&str]) -> Result<Vec<String>, String> {
        // A folder per call: tests run in parallel and give the same file names.
        static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let folder = std::env::temp_dir().join(format!(
            "sofabench-config-test-{}-{call}",
            std::process::id()
        ));
        std::fs::create_dir_all(&folder).unwrap();
        let file = folder.join(file_name);
        std::fs::write(&file, content).unwrap();
        let mut all: Vec<OsString> = vec![
            "sofabench".into(),
            "run".into(),
            "--config".into(),
            file.into(),
        ];
        all.extend(args.iter().map(OsString::from));
        let result = expand(all)
            .map(|v| {
                v.into_iter()
                    .map(|a| a.to_string_lossy().into_owned())
                    .collect()
            })
            .map_err(|e| e.to_string());
        let _ = std::fs::remove_dir_all(folder);
        result
    }

    #[test]
    fn toml_and_json_entries_become_flags_before_the_command_line() {
        let args = expand_with(
            "a.toml",
            "num_connections = 4\ndatabase-address = ['http://a:1', 'http://b:2']\nreuse = true\ncleanup = false\nduration = '30s'\n",
            &["--num_connections=8"],
        )
        .unwrap();
        let mut from_file = args[2..6].to_vec();
        from_file.sort();
        assert_eq!(
            from_file,
            [
                "--database-address=http://a:1,http://b:2",
                "--duration=30s",
                "--num_connections=4",
                "--reuse",
            ]
        );
        assert_eq!(args[..2], ["sofabench", "run"]);
        assert_eq!(
            args[6..],
            ["--num_connections=8"],
            "the command line comes last and wins"
        );
        let mut args = expand_with("b.json", r#"{"rate": 50.5, "quiet": true}"#, &[]).unwrap();
        args[2..].sort();
        assert_eq!(args[2..], ["--quiet", "--rate=50.5"]);
        for (entry, flag) in [
            ("retry-429 = true", Some("--retry-429")),
            ("retry_429 = 5", Some("--retry_429=5")),
            ("retry-429 = false", None),
        ] {
            let args = expand_with("h.toml", entry, &[]).unwrap();
            assert_eq!(args.get(2).map(String::as_str), flag, "{entry}");
        }
        let args = expand_with(
            "g.toml",
            "threshold = ['read.p99 < 20ms', 'error_rate < 1%']\n",
            &[],
        )
        .unwrap();
        assert_eq!(
            args[2..],
            ["--threshold=read.p99 < 20ms", "--threshold=error_rate < 1%"],
            "a repeatable flag takes an array, one flag per entry"
        );
    }

    #[test]
    fn unknown_keys_name_the_closest_valid_one() {
        let err = expand_with("c.toml", "num_conections = 4\n", &[]).unwrap_err();
        assert!(
            err.contains("unknown key \"num_conections\"") && err.contains("\"num_connections\""),
            "{err}"
        );
        let err = expand_with("d.toml", "reuse = 3\n", &[]).unwrap_err();
        assert!(err.contains("true or false"), "{err}");
        let err = expand_with("e.toml", "num_connections = \n", &[]).unwrap_err();
        assert!(err.contains("not valid TOML"), "{err}");
        let err = expand_with("f.json", "[1]", &[]).unwrap_err();
        assert!(err.contains("one JSON object"), "{err}");
    }

    #[test]
    fn a_long_array_is_refused_before_it_becomes_flags() {
        // 100,000 thresholds took 126 MB to parse; a 64 MiB file of them, gigabytes.
        let many = |n: usize, key: &str| {
            let values: Vec<String> = (0..n).map(|i| format!("'read.p99 < {i}ms'")).collect();
            format!("{key} = [{}]\n", values.join(","))
        };
        let err = expand_with("h.toml", &many(1_001, "threshold"), &[]).unwrap_err();
        assert!(
            err.contains("h.toml: key \"threshold\" has 1001 values: at most 1000; give fewer"),
            "{err}"
        );
        let err = expand_with("i.toml", &many(5_000, "batch-sizes"), &[]).unwrap_err();
        assert!(err.contains("has 5000 values"), "{err}");
        let args = expand_with("j.toml", &many(1_000, "threshold"), &[]).unwrap();
        assert_eq!(args.len(), 2 + 1_000);
    }
}
