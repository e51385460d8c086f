//! Rank, world size, local rank and rank 0's address from a launcher's environment ([`Launch`]).

use crate::error::{Error, Result};

/// Which launcher's variables a [`Launch`] was read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Launcher {
    /// torchrun (and anything that sets its names): `RANK`, `WORLD_SIZE`, `LOCAL_RANK`,
    /// `MASTER_ADDR`, `MASTER_PORT`.
    Torchrun,
    /// Slurm's `srun`: `SLURM_PROCID`, `SLURM_NTASKS`, `SLURM_LOCALID`.
    Slurm,
    /// Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK`, `OMPI_COMM_WORLD_SIZE`, `OMPI_COMM_WORLD_LOCAL_RANK`.
    OpenMpi,
    /// Given by the program ([`Launch::new`]).
    Explicit,
}

/// Where this process stands in a job: its rank, the world size, its rank on its own machine, and where
/// rank 0 listens for the [`Rendezvous`](super::Rendezvous).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub(super) rank: usize,
    pub(super) world_size: usize,
    pub(super) local_rank: Option<usize>,
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) launcher: Launcher,
    pub(super) job: Option<String>,
}

/// The port Slurm jobs use when `MASTER_PORT` is not set: 20000 + the job id modulo 20000, so two jobs
/// sharing a node rarely meet on one port.
fn slurm_port(job: Option<&str>) -> u16 {
    let id: u64 = job.and_then(|j| j.parse().ok()).unwrap_or(0);
    20000 + (id % 20000) as u16
}

/// The first host of a Slurm node list: `node[01-04,07],gpu2` gives `node01`.
pub(super) fn first_slurm_host(list: &str) -> Option<String> {
    let list = list.trim();
    // The first entry ends at a comma outside brackets.
    let mut depth = 0;
    let end = list
        .char_indices()
        .find(|&(_, c)| {
            match c {
                '[' => depth += 1,
                ']' => depth -= 1,
                _ => {}
            }
            c == ',' && depth == 0
        })
        .map_or(list.len(), |(i, _)| i);
    let first = &list[..end];
    let host = match first.find('[') {
        None => first.to_string(),
        Some(open) => {
            let inner = first[open + 1..].trim_end_matches(']');
            let range = inner.split(',').next()?;
            let lo = range.split('-').next()?;
            format!("{}{}", &first[..open], lo)
        }
    };
    (!host.is_empty()).then_some(host)
}

impl Launch {
    /// Rank `rank` of `world_size`, rank 0 listening at `host:port`.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] for a world size of 0, a rank not below it, an empty host or port 0.
    ///
    /// ```
    /// let l = hip::bootstrap::Launch::new(1, 4, "127.0.0.1", 29500)?.with_local_rank(1);
    /// assert_eq!((l.rank(), l.world_size(), l.local_rank()), (1, 4, Some(1)));
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn new(rank: usize, world_size: usize, host: &str, port: u16) -> Result<Launch> {
        let l = Launch {
            rank,
            world_size,
            local_rank: None,
            host: host.to_string(),
            port,
            launcher: Launcher::Explicit,
            job: None,
        };
        l.check()?;
        Ok(l)
    }

    /// The same, with this process's rank on its own machine (which picks its device).
    pub fn with_local_rank(mut self, local_rank: usize) -> Launch {
        self.local_rank = Some(local_rank);
        self
    }

    /// Read the launcher's variables from this process's environment; see [`Launch::from_vars`].
    ///
    /// # Errors
    ///
    /// As [`Launch::from_vars`].
    ///
    /// ```no_run
    /// // Run under `torchrun --nproc-per-node=2 prog`, `srun -n 2 prog` or `mpirun -np 2 prog`.
    /// let launch = hip::bootstrap::Launch::from_env()?;
    /// println!("rank {} of {}", launch.rank(), launch.world_size());
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_env() -> Result<Launch> {
        Launch::from_vars(|name| std::env::var(name).ok())
    }

    /// Read the launcher's variables through `var` (a name to its value), in this order:
    ///
    /// 1. torchrun's names, where `RANK` and `WORLD_SIZE` are set: `LOCAL_RANK`, `MASTER_ADDR`,
    ///    `MASTER_PORT` (both required), the job id from `TORCHELASTIC_RUN_ID`;
    /// 2. Slurm's, where `SLURM_PROCID` and `SLURM_NTASKS` are set: local rank `SLURM_LOCALID`; the
    ///    address is `MASTER_ADDR` if set, else the first host of `SLURM_STEP_NODELIST` (or
    ///    `SLURM_JOB_NODELIST`, `SLURM_NODELIST`), where `srun`'s block distribution puts rank 0; the port
    ///    is `MASTER_PORT` if set, else 20000 + `SLURM_JOB_ID` modulo 20000;
    /// 3. Open MPI's, where `OMPI_COMM_WORLD_RANK` and `OMPI_COMM_WORLD_SIZE` are set: local rank
    ///    `OMPI_COMM_WORLD_LOCAL_RANK`. Open MPI publishes no address for rank 0: `MASTER_ADDR` is
    ///    required unless every rank is on one machine (`OMPI_COMM_WORLD_LOCAL_SIZE` equals the world
    ///    size: then `127.0.0.1`), and `MASTER_PORT` is always required (pass both with `mpirun -x`).
    ///
    /// The first launcher whose two names are set wins: torchrun's inside a Slurm job, for instance.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidArgument`] naming the variable: none of the three sets is present, a value that is
    /// not a number, a rank not below the world size, a missing address or port.
    ///
    /// ```
    /// use hip::bootstrap::{Launch, Launcher};
    /// let vars = [("SLURM_PROCID", "3"), ("SLURM_NTASKS", "8"), ("SLURM_LOCALID", "1"),
    ///             ("SLURM_JOB_NODELIST", "gpu[07-08]"), ("SLURM_JOB_ID", "4242")];
    /// let get = |n: &str| vars.iter().find(|v| v.0 == n).map(|v| v.1.to_string());
    /// let l = Launch::from_vars(get)?;
    /// assert_eq!((l.launcher(), l.rank(), l.local_rank()), (Launcher::Slurm, 3, Some(1)));
    /// assert_eq!((l.host(), l.port()), ("gpu07", 24242));
    /// # Ok::<(), hip::Error>(())
    /// ```
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Launch> {
        let num = |name: &'static str| -> Result<Option<usize>> {
            match var(name) {
                None => Ok(None),
                Some(v) => v
                    .trim()
                    .parse()
                    .map(Some)
                    .map_err(|_| Error::InvalidArgument {
                        what: name,
                        value: v,
                        reason: "not a non-negative integer".into(),
                    }),
            }
        };
        let port = |required: bool, default: Option<u16>| -> Result<u16> {
            match var("MASTER_PORT") {
                Some(v) => match v.trim().parse::<u16>() {
                    Ok(p) if p > 0 => Ok(p),
                    _ => Err(Error::InvalidArgument {
                        what: "MASTER_PORT",
                        value: v,
                        reason: "not a port number (1 to 65535)".into(),
                    }),
                },
                None if !required => default.ok_or_else(|| missing("MASTER_PORT", "")),
                None => Err(missing("MASTER_PORT", "")),
            }
        };
        let (launcher, rank, world, local, host, port, job) = if let (Some(r), Some(w)) =
            (num("RANK")?, num("WORLD_SIZE")?)
        {
            let host = var("MASTER_ADDR").ok_or_else(|| missing("MASTER_ADDR", ""))?;
            let job = var("TORCHELASTIC_RUN_ID");
            (
                Launcher::Torchrun,
                r,
                w,
                num("LOCAL_RANK")?,
                host,
                port(true, None)?,
                job,
            )
        } else if let (Some(r), Some(w)) = (num("SLURM_PROCID")?, num("SLURM_NTASKS")?) {
            let job = var("SLURM_JOB_ID");
            let host = var("MASTER_ADDR")
                .or_else(|| {
                    [
                        "SLURM_STEP_NODELIST",
                        "SLURM_JOB_NODELIST",
                        "SLURM_NODELIST",
                    ]
                    .iter()
                    .find_map(|n| var(n).and_then(|l| first_slurm_host(&l)))
                })
                .ok_or_else(|| {
                    missing(
                        "MASTER_ADDR",
                        " (and no SLURM_STEP_NODELIST, SLURM_JOB_NODELIST or SLURM_NODELIST)",
                    )
                })?;
            let port = port(false, Some(slurm_port(job.as_deref())))?;
            let job =
                job.map(|j| format!("slurm-{j}.{}", var("SLURM_STEP_ID").unwrap_or_default()));
            (
                Launcher::Slurm,
                r,
                w,
                num("SLURM_LOCALID")?,
                host,
                port,
                job,
            )
        } else if let (Some(r), Some(w)) =
            (num("OMPI_COMM_WORLD_RANK")?, num("OMPI_COMM_WORLD_SIZE")?)
        {
            let one_node = num("OMPI_COMM_WORLD_LOCAL_SIZE")? == Some(w);
            let host = match var("MASTER_ADDR") {
                Some(h) => h,
                None if one_node => "127.0.0.1".into(),
                None => {
                    return Err(missing(
                        "MASTER_ADDR",
                        " (Open MPI publishes no address for rank 0: pass `mpirun -x MASTER_ADDR=<rank 0's host>`)",
                    ))
                }
            };
            let job = var("OMPI_MCA_orte_ess_jobid").or_else(|| var("PMIX_NAMESPACE"));
            let port = port(true, None)?;
            (
                Launcher::OpenMpi,
                r,
                w,
                num("OMPI_COMM_WORLD_LOCAL_RANK")?,
                host,
                port,
                job,
            )
        } else {
            return Err(Error::InvalidArgument {
                what: "launcher environment",
                value: String::new(),
                reason: "none of RANK and WORLD_SIZE (torchrun), SLURM_PROCID and SLURM_NTASKS (Slurm), \
                         OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (Open MPI) is set: launch with one \
                         of them, or build a Launch with Launch::new"
                    .into(),
            });
        };
        let l = Launch {
            rank,
            world_size: world,
            local_rank: local,
            host: host.trim().to_string(),
            port,
            launcher,
            job,
        };
        l.check()?;
        Ok(l)
    }

    fn check(&self) -> Result<()> {
        let bad = |what, value: String, reason: &str| {
            Err(Error::InvalidArgument {
                what,
                value,
                reason: reason.into(),
            })
        };
        if self.world_size == 0 {
            return bad("world size", "0".into(), "a job has at least one rank");
        }
        if self.world_size > i32::MAX as usize {
            return bad(
                "world size",
                self.world_size.to_string(),
                "more ranks than an int holds",
            );
        }
        if self.rank >= self.world_size {
            return bad(
                "rank",
                self.rank.to_string(),
                &format!("must be below the world size ({})", self.world_size),
            );
        }
        if self.host.is_empty() {
            return bad("MASTER_ADDR", String::new(), "empty");
        }
        if self.port == 0 {
            return bad(
                "MASTER_PORT",
                "0".into(),
                "rank 0 needs a fixed port (1 to 65535)",
            );
        }
        Ok(())
    }

    /// This process's rank, from 0.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of ranks in the job.
    pub fn world_size(&self) -> usize {
        self.world_size
    }

    /// This process's rank among those on its machine (`LOCAL_RANK`, `SLURM_LOCALID`,
    /// `OMPI_COMM_WORLD_LOCAL_RANK`), where the launcher gave one: it picks the device.
    pub fn local_rank(&self) -> Option<usize> {
        self.local_rank
    }

    /// Rank 0's host (name or address).
    pub fn host(&self) -> &str {
        &self.host
    }

    /// Rank 0's port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// `host:port` (IPv6 addresses in brackets).
    pub fn addr(&self) -> String {
        if self.host.contains(':') && !self.host.starts_with('[') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    /// Whose variables these were.
    pub fn launcher(&self) -> Launcher {
        self.launcher
    }

    /// The launcher's job id where it gives one (`TORCHELASTIC_RUN_ID`; Slurm's job and step;
    /// Open MPI's job): part of every exchange's key, so a rank never takes an id from another job's
    /// rank 0 that still holds the port.
    pub fn job(&self) -> Option<&str> {
        self.job.as_deref()
    }
}

fn missing(name: &'static str, note: &str) -> Error {
    Error::InvalidArgument {
        what: name,
        value: String::new(),
        reason: format!("not set{note}"),
    }
}
