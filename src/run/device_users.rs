//! `--device-users`: a user per own database, named a member in its `_security`, made
//! ready with the databases and deleted by `--cleanup` only when this run created it.
//! Only the first client machine makes them (as it makes the feeds); every machine
//! knows the passwords (see `driver::auth::device`).

use std::sync::Arc;

use serde::Deserialize;

use super::databases::Prepared;
use super::runner::{print, setup_failed};
use crate::driver::Endpoint;
use crate::driver::admin::{Admin, SetupError};
use crate::driver::auth::{DeviceKey, DeviceLogin, DeviceLogins};
use crate::driver::connection::{Call, Client};
use crate::driver::http1::Method;
use crate::exit::Failed;
use crate::scenario::Scenario;
use crate::target::Target;

/// The device users of a pass: how devices log in, and which users the run made.
pub struct DeviceUsers {
    pub logins: Arc<DeviceLogins>,
    /// The users this run created, with their database (what `--cleanup` deletes).
    made: Vec<(Target, String)>,
    /// How many users the run found already there (made by an earlier run).
    found: usize,
}

/// Whether a phase of `scenario` has devices that log in as their database's user.
pub fn wanted(scenario: &Scenario) -> bool {
    scenario
        .phases
        .iter()
        .any(|p| p.fleet.as_ref().is_some_and(|f| f.users))
}

/// The users of `prepared`'s databases: made and named in each `_security` when this
/// machine `provisions`, else only known. A failure half way deletes the users made.
pub async fn provision(
    prepared: &Prepared,
    node: &Arc<Endpoint>,
    key: &DeviceKey,
    provisions: bool,
    max_response: u64,
) -> Result<DeviceUsers, Failed> {
    let databases: Vec<Target> = prepared.each.iter().map(|(t, _)| t.clone()).collect();
    let logins = DeviceLogins::new(&databases, key, max_response);
    let mut users = DeviceUsers {
        logins: Arc::new(DeviceLogins::default()),
        made: Vec::new(),
        found: 0,
    };
    if provisions {
        for (database, login) in databases.iter().zip(&logins.each) {
            if let Err(problem) = users.make(database, login, node, key).await {
                let _ = users.delete_made(node).await;
                return Err(setup_failed(problem));
            }
        }
        print(&users.line(databases.len()));
    }
    users.logins = Arc::new(logins);
    Ok(users)
}

impl DeviceUsers {
    /// Makes `login`'s user (or finds it, able to log in) and names it in `_security`.
    async fn make(
        &mut self,
        database: &Target,
        login: &DeviceLogin,
        node: &Arc<Endpoint>,
        key: &DeviceKey,
    ) -> Result<(), SetupError> {
        let mut admin = Admin::new(database, node.clone());
        let user = &login.user;
        let created = match admin.user_revision(user).await? {
            Some(_) => false,
            None => admin.create_user(&key.credentials(user)).await?,
        };
        if created {
            self.made.push((database.clone(), user.clone()));
        } else {
            check_logs_in(login).await?;
            self.found += 1;
        }
        admin.add_member(user).await?;
        Ok(())
    }

    /// The header's line: `device users: 4 created by this run`.
    fn line(&self, count: usize) -> String {
        let made = self.made.len();
        let what = if self.found == 0 {
            format!("{made} created by this run")
        } else {
            format!(
                "{made} created by this run, {} found from an earlier one",
                self.found
            )
        };
        format!("  device users ({count}, one per database, members of its _security): {what}\n")
    }

    async fn delete_made(&self, node: &Arc<Endpoint>) -> Result<usize, SetupError> {
        let mut deleted = 0;
        for (database, user) in &self.made {
            let mut admin = Admin::new(database, node.clone());
            if let Some(revision) = admin.user_revision(user).await? {
                admin.delete_user(user, &revision).await?;
            }
            deleted += 1;
        }
        Ok(deleted)
    }

    /// `--cleanup`: deletes the users this run created, never one it found.
    pub async fn clean_up(&self, node: &Arc<Endpoint>) -> Result<(), Failed> {
        if self.made.is_empty() && self.found == 0 {
            return Ok(());
        }
        let deleted = self.delete_made(node).await.map_err(setup_failed)?;
        let kept = if self.found > 0 {
            format!(
                "; kept the {} found: --cleanup only deletes users the run created",
                self.found
            )
        } else {
            String::new()
        };
        print(&format!(
            "deleted {deleted} device users (--cleanup){kept}\n"
        ));
        Ok(())
    }
}

/// A user found in `_users` is used only if it takes the password this run derives
/// (one an earlier run on the same databases made): never one someone else made.
async fn check_logs_in(login: &DeviceLogin) -> Result<(), SetupError> {
    #[derive(Deserialize)]
    struct Session {
        #[serde(rename = "userCtx")]
        user_ctx: UserCtx,
    }
    #[derive(Deserialize)]
    struct UserCtx {
        name: Option<String>,
    }
    let refused = || SetupError {
        message: format!(
            "user {:?} already exists in _users and does not log in with the password this run gives it (it is not one an earlier run made with the same credentials); delete it, or give another --database-name",
            login.user
        ),
        bad_input: true,
    };
    let Some(endpoint) = login.endpoints.first() else {
        return Err(refused());
    };
    let mut client = Client::new(endpoint.clone(), Some(std::time::Duration::from_secs(10)));
    let call = Call {
        method: Method::Get,
        path: "/_session",
        body: None,
    };
    let answer = client.send(&call).await.map_err(|e| SetupError {
        message: format!("checking user {:?}'s login: {e}", login.user),
        bad_input: false,
    })?;
    let name = serde_json::from_slice::<Session>(&answer.body)
        .ok()
        .and_then(|s| s.user_ctx.name);
    if answer.status == 200 && name.as_deref() == Some(login.user.as_str()) {
        Ok(())
    } else {
        Err(refused())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_says_what_was_made_and_found() {
        let mut users = DeviceUsers {
            logins: Arc::new(DeviceLogins::default()),
            made: Vec::new(),
            found: 0,
        };
        let target = Target::parse("http://127.0.0.1:5984", "db").unwrap();
        users.made.push((target.clone(), "db-device".to_string()));
        assert_eq!(
            users.line(1),
            "  device users (1, one per database, members of its _security): 1 created by this run\n"
        );
        users.found = 2;
        assert!(
            users
                .line(3)
                .ends_with("1 created by this run, 2 found from an earlier one\n")
        );
    }
}
