//! The checks of a launch for a kernel recorded as a graph node (`graph_builder`), and the uses it adds.

use super::{check_config_for, dynamic_shared_opt_in, LaunchArgs, LaunchConfig, Platform};
use super::{ThreadIndex, MAX_KERNEL_ARGS};
use crate::device::Device;
use crate::error::{Error, Result};
use crate::memory::{Access, Allocation};
use crate::module::Function;
use std::sync::Arc;

impl LaunchArgs<'_> {
    /// The tracked allocations among the arguments and how the kernel uses each.
    pub(crate) fn tracked_uses(&self) -> Vec<(Arc<Allocation>, Access)> {
        (0..self.uses)
            .map(|i| {
                let access = if self.writes >> i & 1 == 1 {
                    Access::Write
                } else {
                    Access::Read
                };
                (self.tracked_allocation(i).clone(), access)
            })
            .collect()
    }
}

/// Check a launch of `function` with `config` and `args` for a graph of `device` as
/// [`Function::launch`] checks one on a stream of `device`: argument count and signature, the function's
/// device, the memory's devices, the configuration; host-visible memory is refused (as in a capture).
/// `what` names the node for the errors.
pub(crate) fn check_node_launch(
    what: &'static str,
    function: &Function,
    device: &Device,
    config: &LaunchConfig,
    args: &LaunchArgs<'_>,
) -> Result<()> {
    if args.overflow {
        return Err(Error::TooManyArguments {
            max: MAX_KERNEL_ARGS,
        });
    }
    args.check_against(function)?;
    let own = function.module().device();
    if own.ordinal() != device.ordinal() {
        return Err(Error::InvalidLaunch(format!(
            "{what}: the graph is on device {} but kernel `{}` is loaded on device {}",
            device.ordinal(),
            function.name(),
            own.ordinal()
        )));
    }
    args.check_devices(own)?;
    for i in 0..args.uses {
        if args.tracked_allocation(i).is_host_visible() {
            return Err(Error::InvalidArgument {
                what,
                value: format!("argument {}", usize::from(args.tracked_param_of(i))),
                reason:
                    "pinned or managed memory cannot be used by a graph node: a launch needs no \
                         borrow of it, so it could change memory the host holds a slice of"
                        .into(),
            });
        }
    }
    check_config_for(
        Platform::CURRENT,
        ThreadIndex::Bits32,
        config,
        own.limits(),
        function.max_threads_per_block(),
        function.static_shared_bytes(),
        dynamic_shared_opt_in(function, config, own.limits()),
        function.name(),
    )
}

impl LaunchArgs<'_> {
    fn tracked_param_of(&self, i: usize) -> u8 {
        // SAFETY: `push` wrote entries `..uses` of `tracked_param`; callers pass `i < uses`.
        unsafe { self.tracked_param[i].assume_init() }
    }
}
