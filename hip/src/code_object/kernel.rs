//! What a code object says of one kernel: its name, symbol, target and parameters. Shared by the AMD
//! metadata reader (`metadata.rs`) and the PTX reader (`ptx.rs`), which both build [`Kernel`]s.

/// What a kernel parameter is, as far as the code object says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    /// An address the caller passes: a device buffer or view (AMD `global_buffer`,
    /// `dynamic_shared_pointer`, `image`, `sampler`, `pipe`, `queue`; PTX `.ptr`).
    Pointer,
    /// Bytes passed by value (AMD `by_value`; a PTX parameter whose size is not a pointer's).
    Value,
    /// Filled in by the runtime, not by the caller (AMD `hidden_*`): not part of the launch arguments.
    Hidden,
    /// The code object does not say whether it is an address or a value (a PTX `.u64`/`.b64`/`.s64`
    /// parameter without `.ptr`): only its size is checked.
    Unknown,
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    /// Its name, where the metadata has one.
    pub name: Option<String>,
    /// Offset in the kernel argument segment, bytes.
    pub offset: u64,
    /// Size in bytes.
    pub size: u64,
    /// Alignment in bytes where the code object gives it (PTX: `.align` or the type's size). AMD metadata
    /// has none for arguments (a struct's alignment cannot be told from its offset and size): `None`.
    pub align: Option<u64>,
    /// Pointer, value or hidden.
    pub kind: ParamKind,
    /// The metadata's own kind word: AMD `.value_kind` (`global_buffer`, `by_value`, `hidden_block_count_x`,
    /// ...), or the PTX type (`.u64`, `.b8`, ...).
    pub value_kind: String,
    /// Address space of a pointer (`global`, `constant`, `local`, ...), where given.
    pub address_space: Option<String>,
    /// Source type name, where the metadata has one (AMD `.type_name`).
    pub type_name: Option<String>,
}

/// One kernel of a code object.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Kernel {
    /// Its name: what `Module::function` is given (`extern "C"` name or lowered, mangled name).
    pub name: String,
    /// Its symbol (AMD: `<name>.kd`, the kernel descriptor; PTX: the entry name).
    pub symbol: String,
    /// The target: AMD target id (`amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`), or PTX `.target`
    /// (`sm_52`).
    pub target: String,
    /// Every parameter, hidden ones included, in order.
    pub params: Vec<Param>,
    /// Size of the kernel argument segment in bytes.
    pub kernarg_segment_size: Option<u64>,
    /// Static shared memory (LDS, group segment) in bytes.
    pub group_segment_size: Option<u64>,
    /// Private (scratch) memory per work-item in bytes.
    pub private_segment_size: Option<u64>,
    /// Wavefront size.
    pub wavefront_size: Option<u32>,
    /// Most work-items per work-group.
    pub max_workgroup_size: Option<u32>,
    /// Scalar registers.
    pub sgpr_count: Option<u32>,
    /// Vector registers.
    pub vgpr_count: Option<u32>,
}

impl Kernel {
    /// The parameters the caller passes (hidden ones left out), in launch-argument order.
    pub fn explicit_params(&self) -> impl Iterator<Item = &Param> {
        self.params.iter().filter(|p| p.kind != ParamKind::Hidden)
    }
}

/// The longest target a kernel may carry (a target id such as `amdgcn-amd-amdhsa--gfx90a:sramecc+:xnack-`
/// is under 50 bytes). Every kernel holds its own copy, so an unbounded target would make parsing take
/// time kernels x target length: quadratic in the image.
pub(crate) const MAX_TARGET_LEN: usize = 256;
