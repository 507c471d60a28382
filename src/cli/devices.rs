//! The device flags of `sofabench run` (`--devices` and `--device-*`), and how they reach
//! the phases: as the `_changes` consumer flags do (see `changes.rs`).
//!
//! `--devices N` gives every phase without a fleet of its own N devices. A built-in
//! scenario's fleets take every flag given; a scenario file's phase with its own
//! `devices` table keeps it whole (a phase's own keys beat the flags).

use std::time::Duration;

use clap::Args;

use super::choices::{Choices, DEVICE_FEEDS, DEVICE_PROFILES, DEVICE_SCOPES};
use crate::scenario::Scenario;
use crate::workload::changes::FeedKind;
use crate::workload::fleet::{
    ClientProfile, ColdJoin, Fleet, FleetScope, Offline, SyncEvery, WriteMix,
};
use crate::workload::fleet_input::{
    self, FLAG_NAMES, MOST_DEVICES, parse_cold, parse_doc_bytes, parse_grace, parse_mix,
    parse_offline, parse_shared, parse_sync, parse_writes,
};

#[derive(Args, Debug, Default, Clone)]
pub struct DevicesArgs {
    /// Devices replicating with the database in every phase
    ///
    /// Each speaks CouchDB's replication protocol as PouchDB does: it writes locally,
    /// pushes its changes and pulls the others'. The report gives time to visible
    /// between devices and whether every device converged with the server.
    #[arg(id = "devices", long = "devices", value_name = "N", value_parser = clap::value_parser!(u64).range(1..=MOST_DEVICES))]
    pub devices: Option<u64>,

    /// What each device replicates
    ///
    /// own-database (the default) with --databases N: N per-user databases, devices
    /// dealt out round robin.
    #[arg(id = "device_scope", long = "device-scope", value_name = "SCOPE", value_parser = Choices::new(FleetScope::parse, &DEVICE_SCOPES), hide_short_help = true)]
    pub scope: Option<FleetScope>,

    /// Which replication client the devices behave like
    #[arg(id = "device_profile", long = "device-profile", value_name = "CLIENT", value_parser = Choices::new(ClientProfile::parse, &DEVICE_PROFILES), hide_short_help = true)]
    pub profile: Option<ClientProfile>,

    /// The feed a device reads
    #[arg(id = "device_feed", long = "device-feed", value_name = "KIND", value_parser = Choices::new(FeedKind::parse, &DEVICE_FEEDS), hide_short_help = true)]
    pub feed: Option<FeedKind>,

    /// live, or how often a device syncs
    ///
    /// live (the default): a feed held open and a push after each write; a duration
    /// (30s): a push and a pull that often, as a phone waking up.
    #[arg(id = "device_sync", long = "device-sync", value_name = "live|TIME", value_parser = parse_sync, hide_short_help = true)]
    pub sync: Option<SyncEvery>,

    /// Local writes per second of each device
    ///
    /// Fractions welcome: 0.2 (the default) is one every 5 s; 0 only reads.
    #[arg(id = "device_writes", long = "device-writes", value_name = "PER_SEC", value_parser = parse_writes, hide_short_help = true)]
    pub writes: Option<f64>,

    /// The devices' writes: new, own edits, shared edits
    ///
    /// Percent of new documents, edits of the device's own documents and edits of
    /// documents all devices share (where conflicts come from), summing to 100;
    /// default 50,50,0.
    #[arg(id = "device_mix", long = "device-mix", value_name = "NEW,OWN,SHARED", value_parser = parse_mix, hide_short_help = true)]
    pub mix: Option<WriteMix>,

    /// How many documents all devices share
    ///
    /// The documents the shared edits of --device-mix pick among.
    #[arg(id = "device_shared_docs", long = "device-shared-docs", value_name = "N", value_parser = parse_shared, hide_short_help = true)]
    pub shared: Option<u64>,

    /// Devices going offline for a while
    ///
    /// SHARE%:FROM:LASTING: that share of the devices stops syncing FROM into the phase,
    /// keeps writing locally, and comes back together after LASTING with its backlog,
    /// e.g. 20%:10s:30s.
    #[arg(id = "device_offline", long = "device-offline", value_name = "SHARE%:FROM:LASTING", value_parser = parse_offline, hide_short_help = true)]
    pub offline: Option<Offline>,

    /// Devices joining with nothing, at TIME into the phase
    ///
    /// N[@TIME]: N of the devices start empty and pull their whole scope (an initial
    /// sync), at the phase's start or TIME into it, e.g. 5@30s.
    #[arg(id = "device_cold", long = "device-cold", value_name = "N[@TIME]", value_parser = parse_cold, hide_short_help = true)]
    pub cold: Option<ColdJoin>,

    /// The size a device's documents are padded to, bytes
    ///
    /// 16 to 1048576; default 256.
    #[arg(id = "device_doc_size", long = "device-doc-size", value_name = "BYTES", value_parser = parse_doc_bytes, hide_short_help = true)]
    pub doc_bytes: Option<u32>,

    /// A user per own database, its devices logging in as it
    ///
    /// With --device-scope own-database: each database gets a user in _users (a
    /// password made for the run, never shown) named as a member in its _security.
    /// --cleanup deletes the users the run made.
    #[arg(id = "device_users", long = "device-users", hide_short_help = true)]
    pub users: bool,

    /// The longest the devices' last sync may take
    ///
    /// After a phase's writes stop, every device pushes and pulls once more before its
    /// replica is checked against the server; default 2m.
    #[arg(id = "device_grace", long = "device-grace", value_name = "TIME", value_parser = parse_grace, hide_short_help = true)]
    pub grace: Option<Duration>,
}

impl DevicesArgs {
    /// `base` with every setting the flags gave in its place. A built-in fleet whose
    /// devices all join cold keeps them all cold under `--devices` alone.
    fn over(&self, base: Fleet) -> Fleet {
        let all_cold = base.cold.is_some_and(|c| c.devices == base.devices);
        let devices = self.devices.unwrap_or(base.devices);
        let cold = match (self.cold, base.cold) {
            (Some(given), _) => Some(given),
            (None, Some(cold)) if all_cold => Some(ColdJoin { devices, ..cold }),
            (None, cold) => cold,
        };
        Fleet {
            devices,
            scope: self.scope.clone().unwrap_or(base.scope),
            profile: self.profile.unwrap_or(base.profile),
            feed: self.feed.unwrap_or(base.feed),
            sync: self.sync.unwrap_or(base.sync),
            writes_per_second: self.writes.unwrap_or(base.writes_per_second),
            mix: self.mix.unwrap_or(base.mix),
            shared_documents: self.shared.unwrap_or(base.shared_documents),
            offline: self.offline.or(base.offline),
            cold,
            doc_bytes: self.doc_bytes.unwrap_or(base.doc_bytes),
            users: self.users || base.users,
            last_sync: self.grace.unwrap_or(base.last_sync),
        }
    }

    /// The flags given besides `--devices`.
    fn settings_given(&self) -> Vec<&'static str> {
        let given = [
            (self.scope.is_some(), FLAG_NAMES.scope),
            (self.profile.is_some(), "--device-profile"),
            (self.feed.is_some(), FLAG_NAMES.feed),
            (self.sync.is_some(), FLAG_NAMES.sync),
            (self.writes.is_some(), "--device-writes"),
            (self.mix.is_some(), FLAG_NAMES.mix),
            (self.shared.is_some(), FLAG_NAMES.shared),
            (self.offline.is_some(), FLAG_NAMES.offline),
            (self.cold.is_some(), FLAG_NAMES.cold),
            (self.doc_bytes.is_some(), "--device-doc-size"),
            (self.users, FLAG_NAMES.users),
            (self.grace.is_some(), "--device-grace"),
        ];
        given
            .into_iter()
            .filter_map(|(is, flag)| is.then_some(flag))
            .collect()
    }

    /// Gives the scenario's phases their fleets, then checks each whole; refuses
    /// settings no phase takes.
    pub fn apply(&self, scenario: &mut Scenario, builtin: bool) -> Result<(), String> {
        // A built-in scenario that places its fleets keeps them where they are
        // (cold-start's bulk load stays without devices): the flags change those only.
        let placed = builtin && scenario.phases.iter().any(|p| p.fleet.is_some());
        for phase in &mut scenario.phases {
            phase.fleet = match phase.fleet.take() {
                Some(own) if builtin => Some(self.over(own)),
                Some(own) => Some(own),
                None if placed => None,
                None => self.devices.map(|devices| {
                    self.over(Fleet {
                        devices,
                        ..Fleet::default()
                    })
                }),
            };
        }
        let fleets: Vec<&Fleet> = scenario
            .phases
            .iter()
            .filter_map(|p| p.fleet.as_ref())
            .collect();
        let given = self.settings_given();
        if fleets.is_empty() && !given.is_empty() {
            return Err(format!(
                "{} set the devices, and no phase has any: give --devices N too (or --scenario steady-fleet)",
                given.join(", ")
            ));
        }
        // A file's own table was checked as it was read; what the flags made is checked
        // here, in their words.
        let mut problems: Vec<String> = Vec::new();
        for problem in fleets
            .iter()
            .flat_map(|fleet| fleet_input::problems(fleet, &FLAG_NAMES))
        {
            // Phases given the same fleet by the flags have the same problems: once each.
            if !problems.contains(&problem) {
                problems.push(problem);
            }
        }
        if problems.is_empty() {
            Ok(())
        } else {
            Err(problems.join("\nsofabench: error: "))
        }
    }
}

/// Device users on several client machines: every machine logs its devices in, and the
/// passwords come from the run's own password so that all machines know them without
/// sending them anywhere. Without one they cannot agree.
pub fn check_users_across_machines(
    scenario: &Scenario,
    node_count: u64,
    has_password: bool,
) -> Result<(), String> {
    let users = scenario
        .phases
        .iter()
        .any(|p| p.fleet.as_ref().is_some_and(|f| f.users));
    if users && node_count > 1 && !has_password {
        return Err(format!(
            "{} with --node-count {node_count} needs the run's password (--user and --password, or in --database-address): every client machine derives the device users' passwords from it; give one, or run on one machine",
            FLAG_NAMES.users
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Form;
    use crate::workload::{Operation, Phase, Weights};

    fn scenario(phases: Vec<Phase>) -> Scenario {
        let planned = phases
            .into_iter()
            .map(|p| (p, Default::default()))
            .collect();
        Scenario::new("s", "", Form::Standard, planned)
    }

    fn phase(name: &str) -> Phase {
        Phase::sample(name, Weights::only(Operation::Create, 1))
    }

    #[test]
    fn flags_reach_phases_as_the_precedence_says() {
        let args = DevicesArgs {
            devices: Some(30),
            sync: Some(SyncEvery::Every(Duration::from_secs(10))),
            ..DevicesArgs::default()
        };
        let mut own = phase("own");
        own.fleet = Some(Fleet {
            devices: 4,
            ..Fleet::default()
        });
        let mut file = scenario(vec![own.clone(), phase("bare")]);
        args.apply(&mut file, false).unwrap();
        assert_eq!(
            file.phases[0].fleet, own.fleet,
            "a file's table is kept whole"
        );
        let flagged = file.phases[1].fleet.as_ref().unwrap();
        assert_eq!(flagged.devices, 30);
        assert_eq!(flagged.sync, SyncEvery::Every(Duration::from_secs(10)));
        let mut built_in = scenario(vec![own]);
        args.apply(&mut built_in, true).unwrap();
        assert_eq!(built_in.phases[0].fleet.as_ref().unwrap().devices, 30);
    }

    #[test]
    fn a_built_in_scenario_keeps_its_phases_without_fleets_bare() {
        let mut cold = phase("cold");
        cold.fleet = Some(Fleet {
            devices: 5,
            ..Fleet::default()
        });
        let args = DevicesArgs {
            devices: Some(3),
            ..DevicesArgs::default()
        };
        let mut built_in = scenario(vec![phase("bulk-load"), cold]);
        args.apply(&mut built_in, true).unwrap();
        assert_eq!(built_in.phases[0].fleet, None, "the bulk load stays bare");
        assert_eq!(built_in.phases[1].fleet.as_ref().unwrap().devices, 3);
        // No phase with a fleet: --devices gives every phase one.
        let mut bare = scenario(vec![phase("a"), phase("b")]);
        args.apply(&mut bare, true).unwrap();
        assert!(bare.phases.iter().all(|p| p.fleet.is_some()));
    }

    #[test]
    fn an_all_cold_built_in_fleet_stays_all_cold_under_devices() {
        let mut cold = phase("cold");
        cold.fleet = Some(Fleet {
            devices: 5,
            cold: Some(ColdJoin {
                devices: 5,
                at: Duration::ZERO,
            }),
            ..Fleet::default()
        });
        let args = DevicesArgs {
            devices: Some(12),
            ..DevicesArgs::default()
        };
        let mut built_in = scenario(vec![cold]);
        args.apply(&mut built_in, true).unwrap();
        let fleet = built_in.phases[0].fleet.as_ref().unwrap();
        assert_eq!(fleet.cold.map(|c| c.devices), Some(12));
    }

    #[test]
    fn settings_without_devices_are_refused() {
        let args = DevicesArgs {
            users: true,
            ..DevicesArgs::default()
        };
        let error = args.apply(&mut scenario(vec![phase("bare")]), false);
        assert!(error.unwrap_err().contains("--device-users"));
    }

    #[test]
    fn combinations_that_cannot_work_are_named_in_flags() {
        let args = DevicesArgs {
            devices: Some(3),
            scope: Some(FleetScope::DocIds),
            users: true,
            cold: Some(ColdJoin {
                devices: 9,
                at: Duration::ZERO,
            }),
            ..DevicesArgs::default()
        };
        let error = args
            .apply(&mut scenario(vec![phase("a"), phase("b")]), false)
            .unwrap_err();
        assert!(error.contains("--device-cold 9"), "{error}");
        assert!(
            error.contains("--device-users with --device-scope doc-ids"),
            "{error}"
        );
        assert_eq!(error.matches("--device-cold 9").count(), 1, "said once");
        let fine = DevicesArgs {
            devices: Some(3),
            users: true,
            ..DevicesArgs::default()
        };
        let mut one = scenario(vec![phase("a")]);
        assert!(fine.apply(&mut one, false).is_ok());
        assert!(check_users_across_machines(&one, 1, false).is_ok());
        assert!(check_users_across_machines(&one, 2, true).is_ok());
        let across = check_users_across_machines(&one, 2, false).unwrap_err();
        assert!(across.contains("--node-count 2"), "{across}");
    }
}
