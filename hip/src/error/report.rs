//! [`Report`]: what a program's `main` returns, so a failure prints as words (with its status) and the
//! process exits with 1.

use super::Error;
use std::fmt;

/// The error type for a program's `main`: any error (this crate's, I/O, a message of the program's own),
/// printed in words when `main` returns it, with the [`Status`](crate::Status) of a HIP failure.
///
/// Rust prints the error `main` returns with `{:?}`, which for most error types is a struct dump;
/// `Report`'s `Debug` is the message instead (`Error: vector_add.hip:2:10: error: ... [status
/// invalid_argument (410)]`), then the chain of causes. The process exits with status 1.
///
/// ```no_run
/// use hip::Report;
///
/// fn main() -> Result<(), Report> {
///     let Some(device) = hip::Device::first_usable(|why| println!("{why}"))? else {
///         return Ok(());
///     };
///     let name = device.properties()?.name;
///     if name.is_empty() {
///         return Err(Report::msg("the device has no name"));
///     }
///     Ok(())
/// }
/// ```
pub struct Report(Box<dyn std::error::Error + Send + Sync + 'static>);

impl Report {
    /// A report of a message of the program's own (a result that does not check out).
    pub fn msg(message: impl fmt::Display) -> Report {
        Report(message.to_string().into())
    }

    /// The error inside, for a program that looks at it (`report.get().downcast_ref::<hip::Error>()`).
    pub fn get(&self) -> &(dyn std::error::Error + Send + Sync + 'static) {
        &*self.0
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for Report {
    fn from(e: E) -> Report {
        Report(Box::new(e))
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)?;
        if let Some(e) = self.0.downcast_ref::<Error>() {
            write!(f, " [status {}]", e.status())?;
        }
        Ok(())
    }
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{self}")?;
        let mut cause = self.0.source();
        while let Some(c) = cause {
            write!(f, "\n  caused by: {c}")?;
            cause = c.source();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_report_prints_words_and_the_status_of_a_hip_error() {
        let r: Report = Error::DeviceOutOfRange {
            ordinal: 4,
            count: 1,
        }
        .into();
        assert_eq!(
            format!("{r:?}"),
            "device 4 does not exist: 1 HIP device(s) present [status invalid_argument (410)]"
        );
        assert!(r.get().downcast_ref::<Error>().is_some());
        let own = Report::msg("3 of 8 results are wrong");
        assert_eq!(format!("{own:?}"), "3 of 8 results are wrong");
        let io: Report = std::io::Error::from(std::io::ErrorKind::NotFound).into();
        assert!(!format!("{io:?}").contains("status"), "{io:?}");
    }

    #[test]
    fn the_chain_of_causes_follows_the_message() {
        let e = Error::Io {
            what: "read link input",
            path: "/x.bc".into(),
            source: std::io::Error::other("disk on fire"),
        };
        let text = format!("{:?}", Report::from(e));
        assert!(
            text.starts_with("cannot read link input /x.bc: disk on fire [status"),
            "{text}"
        );
        assert!(text.ends_with("\n  caused by: disk on fire"), "{text}");
    }
}
