//! A fleet as users write it: the values of the `--device*` flags and of a scenario
//! file's `devices` table (one reader for both), and the checks of a whole fleet, whose
//! messages name each setting as the user spelled it.

use std::time::Duration;

use super::changes::FeedKind;
use super::fleet::{ColdJoin, Fleet, FleetScope, Offline, SyncEvery, WriteMix};
use crate::time::duration;

/// The most devices a fleet may have, all client machines together.
pub const MOST_DEVICES: u64 = 1_000_000;
/// The most local writes per second of one device.
pub const MOST_WRITES_PER_SECOND: f64 = 1_000.0;
/// The most documents the devices may share.
pub const MOST_SHARED_DOCUMENTS: u64 = 1_000_000;
/// The sizes a device's documents may be padded to, bytes.
pub const DOC_BYTES: (u32, u32) = (16, 1 << 20);
/// The shortest time between two syncs of a periodic device (shorter is live).
pub const SHORTEST_SYNC: Duration = Duration::from_millis(100);
/// The longest wait of anything a fleet times: the sync period, an offline window, a
/// cold join, the last sync.
pub const LONGEST: Duration = Duration::from_secs(24 * 3600);

impl FleetScope {
    pub const NAMES: [&'static str; 3] = ["own-database", "doc-ids", "selector"];

    pub fn parse(text: &str) -> Result<FleetScope, String> {
        match text {
            "own-database" => Ok(FleetScope::OwnDatabase),
            "doc-ids" => Ok(FleetScope::DocIds),
            "selector" => Ok(FleetScope::Selector),
            other => Err(format!(
                "{other:?} is not a device scope; use {}",
                FleetScope::NAMES.join(", ")
            )),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            FleetScope::OwnDatabase => "own-database",
            FleetScope::DocIds => "doc-ids",
            FleetScope::Selector => "selector",
        }
    }
}

/// `live`, or how often a device syncs (`30s`).
pub fn parse_sync(text: &str) -> Result<SyncEvery, String> {
    if text.trim() == "live" {
        return Ok(SyncEvery::Live);
    }
    let every = duration::parse(text).map_err(|_| {
        format!("{text:?} is neither live nor a duration; give live, or how often, e.g. 30s")
    })?;
    if !(SHORTEST_SYNC..=LONGEST).contains(&every) {
        return Err(format!(
            "{text:?}: a device syncs every {SHORTEST_SYNC:?} to {}h; give e.g. 30s, or live",
            LONGEST.as_secs() / 3600
        ));
    }
    Ok(SyncEvery::Every(every))
}

/// Local writes per second of one device: 0 (devices only read) up to
/// [`MOST_WRITES_PER_SECOND`], fractions welcome (`0.2`: one every 5 s).
pub fn parse_writes(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(rate) if rate.is_finite() && (0.0..=MOST_WRITES_PER_SECOND).contains(&rate) => Ok(rate),
        _ => Err(format!(
            "{text:?} is not writes per second per device from 0 to {MOST_WRITES_PER_SECOND}; give e.g. 0.2 (one every 5 s)"
        )),
    }
}

/// `CREATE,EDIT_OWN,EDIT_SHARED` in percent, summing to 100 (`50,40,10`).
pub fn parse_mix(text: &str) -> Result<WriteMix, String> {
    let wrong = || {
        format!(
            "{text:?} is not a mix of writes; give the percent of new documents, edits of a device's own and edits of shared ones, summing to 100, e.g. 50,40,10"
        )
    };
    let parts: Vec<u32> = text
        .split(',')
        .map(|p| p.trim().parse::<u32>().map_err(|_| wrong()))
        .collect::<Result<_, _>>()?;
    let [create, edit_own, edit_shared] = parts[..] else {
        return Err(wrong());
    };
    let mix = WriteMix {
        create,
        edit_own,
        edit_shared,
    };
    check_mix(&mix).map_err(|e| format!("{text:?}: {e}"))?;
    Ok(mix)
}

/// A mix whose shares sum to 100.
pub fn check_mix(mix: &WriteMix) -> Result<(), String> {
    let sum = u64::from(mix.create) + u64::from(mix.edit_own) + u64::from(mix.edit_shared);
    if sum == 100 {
        Ok(())
    } else {
        Err(format!(
            "the shares sum to {sum}, not 100; give e.g. 50,40,10 (new, own edits, shared edits)"
        ))
    }
}

/// `SHARE%:FROM:LASTING`: the share of the devices that goes offline, when, for how
/// long (`20%:10s:30s`).
pub fn parse_offline(text: &str) -> Result<Offline, String> {
    let wrong = |why: &str| {
        format!(
            "{text:?}: {why}; give SHARE%:FROM:LASTING, e.g. 20%:10s:30s (a fifth of the devices offline from 10 s into the phase, for 30 s)"
        )
    };
    let parts: Vec<&str> = text.split(':').map(str::trim).collect();
    let [share, from, lasting] = parts[..] else {
        return Err(wrong("three parts are needed"));
    };
    let share = share
        .strip_suffix('%')
        .unwrap_or(share)
        .trim()
        .parse::<u32>()
        .ok()
        .filter(|s| (1..=100).contains(s))
        .ok_or_else(|| wrong("the share is a percent from 1 to 100"))?;
    let from = duration::parse(from).map_err(|_| wrong("FROM is not a duration"))?;
    let lasting = duration::parse(lasting).map_err(|_| wrong("LASTING is not a duration"))?;
    if lasting.is_zero() {
        return Err(wrong("LASTING is 0, so no device would be offline"));
    }
    if from.saturating_add(lasting) > LONGEST {
        return Err(wrong("FROM and LASTING together reach past 24h"));
    }
    Ok(Offline {
        share,
        from,
        lasting,
    })
}

/// `N[@AT]`: how many devices join cold, and when (at the phase's start without `@`).
pub fn parse_cold(text: &str) -> Result<ColdJoin, String> {
    let wrong = |why: &str| {
        format!(
            "{text:?}: {why}; give N or N@TIME, e.g. 5@30s (5 devices join with nothing 30 s into the phase)"
        )
    };
    let (count, at) = match text.split_once('@') {
        Some((count, at)) => (count, Some(at)),
        None => (text, None),
    };
    let devices = count
        .trim()
        .parse::<u64>()
        .ok()
        .filter(|n| (1..=MOST_DEVICES).contains(n))
        .ok_or_else(|| {
            wrong(&format!(
                "N is a number of devices from 1 to {MOST_DEVICES}"
            ))
        })?;
    let at = match at {
        Some(at) => duration::parse(at).map_err(|_| wrong("TIME is not a duration"))?,
        None => Duration::ZERO,
    };
    if at > LONGEST {
        return Err(wrong("TIME is past 24h"));
    }
    Ok(ColdJoin { devices, at })
}

/// How many documents all devices share.
pub fn parse_shared(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n <= MOST_SHARED_DOCUMENTS => Ok(n),
        _ => Err(format!(
            "{text:?} is not a number of shared documents from 0 to {MOST_SHARED_DOCUMENTS}; give e.g. 20"
        )),
    }
}

/// The size a device's documents are padded to, in bytes.
pub fn parse_doc_bytes(text: &str) -> Result<u32, String> {
    let (low, high) = DOC_BYTES;
    match text.trim().parse::<u32>() {
        Ok(bytes) if (low..=high).contains(&bytes) => Ok(bytes),
        _ => Err(format!(
            "{text:?} is not a document size from {low} to {high} bytes; give e.g. 256"
        )),
    }
}

/// The longest the last sync may take (see [`Fleet::last_sync`]).
pub fn parse_grace(text: &str) -> Result<Duration, String> {
    let grace = duration::parse(text)?;
    if grace.is_zero() || grace > LONGEST {
        return Err(format!(
            "{text:?}: the devices' last sync may take from 1ms to 24h; give e.g. 2m"
        ));
    }
    Ok(grace)
}

/// How the user spells each setting of a fleet, for the messages.
pub struct FleetNames {
    pub devices: &'static str,
    pub scope: &'static str,
    pub feed: &'static str,
    pub sync: &'static str,
    pub mix: &'static str,
    pub shared: &'static str,
    pub offline: &'static str,
    pub cold: &'static str,
    pub users: &'static str,
}

/// The flags' spelling.
pub const FLAG_NAMES: FleetNames = FleetNames {
    devices: "--devices",
    scope: "--device-scope",
    feed: "--device-feed",
    sync: "--device-sync",
    mix: "--device-mix",
    shared: "--device-shared-docs",
    offline: "--device-offline",
    cold: "--device-cold",
    users: "--device-users",
};

/// A scenario file's spelling (keys of a phase's `devices` table).
pub const KEY_NAMES: FleetNames = FleetNames {
    devices: "devices.count",
    scope: "devices.scope",
    feed: "devices.feed",
    sync: "devices.sync",
    mix: "devices.mix",
    shared: "devices.shared_docs",
    offline: "devices.offline",
    cold: "devices.cold",
    users: "devices.users",
};

/// What cannot work in `fleet` as a whole (each value alone is checked as it is read),
/// every problem named as the user spells it.
pub fn problems(fleet: &Fleet, names: &FleetNames) -> Vec<String> {
    let mut problems = Vec::new();
    if !(1..=MOST_DEVICES).contains(&fleet.devices) {
        problems.push(format!(
            "{} {}: give from 1 to {MOST_DEVICES} devices",
            names.devices, fleet.devices
        ));
    }
    if let Some(cold) = fleet.cold
        && cold.devices > fleet.devices
    {
        problems.push(format!(
            "{} {}: more cold devices than the fleet's {} ({}); give at most {}",
            names.cold, cold.devices, fleet.devices, names.devices, fleet.devices
        ));
    }
    if let Err(e) = check_mix(&fleet.mix) {
        problems.push(format!("{}: {e}", names.mix));
    }
    if fleet.mix.edit_shared > 0 && fleet.shared_documents == 0 {
        problems.push(format!(
            "{} gives {}% edits of shared documents, and there are none; give {} N (documents all devices share), or a mix without shared edits",
            names.mix, fleet.mix.edit_shared, names.shared
        ));
    }
    if fleet.shared_documents > MOST_SHARED_DOCUMENTS {
        problems.push(format!(
            "{} {}: at most {MOST_SHARED_DOCUMENTS}",
            names.shared, fleet.shared_documents
        ));
    }
    if fleet.users && fleet.scope != FleetScope::OwnDatabase {
        problems.push(format!(
            "{} with {} {}: a user is made per own database; give {} own-database (with --databases N for N users), or leave {} out",
            names.users,
            names.scope,
            fleet.scope.name(),
            names.scope,
            names.users
        ));
    }
    if fleet.sync == SyncEvery::Live && fleet.feed == FeedKind::Normal {
        problems.push(format!(
            "{} normal with {} live: a live device holds its feed open; give {} longpoll or continuous, or {} 30s to read a normal feed every 30 s",
            names.feed, names.sync, names.feed, names.sync
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_read_as_written() {
        assert_eq!(parse_sync("live"), Ok(SyncEvery::Live));
        assert_eq!(
            parse_sync("30s"),
            Ok(SyncEvery::Every(Duration::from_secs(30)))
        );
        assert_eq!(parse_writes("0.2"), Ok(0.2));
        let mix = parse_mix("50, 40,10").unwrap();
        assert_eq!((mix.create, mix.edit_own, mix.edit_shared), (50, 40, 10));
        let offline = parse_offline("20%:10s:30s").unwrap();
        assert_eq!(
            (offline.share, offline.from, offline.lasting),
            (20, Duration::from_secs(10), Duration::from_secs(30))
        );
        assert_eq!(parse_offline("20:0s:1m").unwrap().share, 20);
        assert_eq!(
            parse_cold("5@30s"),
            Ok(ColdJoin {
                devices: 5,
                at: Duration::from_secs(30)
            })
        );
        assert_eq!(parse_cold("7").unwrap().at, Duration::ZERO);
        assert_eq!(FleetScope::parse("doc-ids"), Ok(FleetScope::DocIds));
        assert_eq!(parse_doc_bytes("256"), Ok(256));
    }

    #[test]
    fn bad_values_say_what_to_give() {
        for (problem, example) in [
            (parse_sync("10ms").unwrap_err(), "30s"),
            (parse_sync("often").unwrap_err(), "live"),
            (parse_writes("-1").unwrap_err(), "0.2"),
            (parse_writes("NaN").unwrap_err(), "0.2"),
            (parse_mix("50,40").unwrap_err(), "50,40,10"),
            (parse_mix("50,40,20").unwrap_err(), "sum to 110"),
            (parse_offline("0%:1s:1s").unwrap_err(), "1 to 100"),
            (parse_offline("20%:1s:0s").unwrap_err(), "LASTING is 0"),
            (parse_offline("20%:1s").unwrap_err(), "20%:10s:30s"),
            (parse_cold("0").unwrap_err(), "5@30s"),
            (parse_cold("3@soon").unwrap_err(), "TIME"),
            (parse_doc_bytes("2").unwrap_err(), "256"),
            (parse_grace("0s").unwrap_err(), "2m"),
            (FleetScope::parse("all").unwrap_err(), "own-database"),
        ] {
            assert!(problem.contains(example), "{problem:?} lacks {example:?}");
        }
    }

    #[test]
    fn a_fleet_that_cannot_work_is_refused_with_every_reason() {
        let fine = Fleet::default();
        assert!(problems(&fine, &FLAG_NAMES).is_empty());
        let fleet = Fleet {
            devices: 3,
            cold: Some(ColdJoin {
                devices: 4,
                at: Duration::ZERO,
            }),
            mix: WriteMix {
                create: 0,
                edit_own: 50,
                edit_shared: 50,
            },
            scope: FleetScope::DocIds,
            users: true,
            feed: FeedKind::Normal,
            ..Fleet::default()
        };
        let found = problems(&fleet, &KEY_NAMES);
        assert_eq!(found.len(), 4, "{found:?}");
        assert!(found[0].starts_with("devices.cold 4"), "{found:?}");
        assert!(found[1].contains("devices.shared_docs N"), "{found:?}");
        assert!(found[2].starts_with("devices.users with devices.scope doc-ids"));
        assert!(found[3].starts_with("devices.feed normal with devices.sync live"));
        let users_own = Fleet {
            users: true,
            ..Fleet::default()
        };
        assert!(problems(&users_own, &FLAG_NAMES).is_empty());
    }
}
