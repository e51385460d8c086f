//! The exported name carries a fingerprint of the signature: the roles and types of the parameters in
//! order, not their names nor the body. A launcher compiled from one version of a kernel never finds the
//! entry point of another version (`load` refuses the module), while a rename or a new body keeps it.
use hip_kernel_macros::kernel;

mod v1 {
    use super::kernel;
    use hip_rs_kernel_types::device::{In, Out};
    #[kernel]
    pub fn scale(x: In<f32>, mut y: Out<f32>, s: f32) {
        if let Some(y_i) = y.mine() {
            *y_i = s * x.get(0).unwrap_or(0.0);
        }
    }
}

/// Same roles and types, other parameter names and body.
mod renamed {
    use super::kernel;
    use hip_rs_kernel_types::device::{In, Out};
    #[kernel]
    pub fn scale(input: In<f32>, mut output: Out<f32>, factor: f32) {
        output.for_each_mine(|i, o| *o = factor * input.get(i).unwrap_or(1.0));
    }
}

/// The scalar became an f64.
mod wider {
    use super::kernel;
    use hip_rs_kernel_types::device::{In, Out};
    #[kernel]
    pub fn scale(x: In<f32>, mut y: Out<f32>, s: f64) {
        if let Some(y_i) = y.mine() {
            *y_i = (s * f64::from(x.get(0).unwrap_or(0.0))) as f32;
        }
    }
}

/// The parameters swapped order.
mod swapped {
    use super::kernel;
    use hip_rs_kernel_types::device::{In, Out};
    #[kernel]
    pub fn scale(s: f32, x: In<f32>, mut y: Out<f32>) {
        if let Some(y_i) = y.mine() {
            *y_i = s * x.get(0).unwrap_or(0.0);
        }
    }
}

/// The input became an output (a role, not a type).
mod roles {
    use super::kernel;
    use hip_rs_kernel_types::device::Out;
    #[kernel]
    pub fn scale(mut x: Out<f32>, mut y: Out<f32>, s: f32) {
        if let (Some(x_i), Some(y_i)) = (x.mine(), y.mine()) {
            *y_i = s * *x_i;
        }
    }
}

#[test]
fn the_name_is_the_kernel_name_and_16_hex_digits() {
    let name = v1::scale::NAME;
    let fp = name.strip_prefix("scale_hk").expect("NAME_hk prefix");
    assert_eq!(fp.len(), 16);
    assert!(fp
        .bytes()
        .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
}

#[test]
fn names_and_bodies_do_not_change_the_fingerprint() {
    assert_eq!(v1::scale::NAME, renamed::scale::NAME);
}

#[test]
fn a_type_order_or_role_change_does() {
    let names = [
        v1::scale::NAME,
        wider::scale::NAME,
        swapped::scale::NAME,
        roles::scale::NAME,
    ];
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            assert_ne!(a, b);
        }
    }
}

#[test]
fn the_fingerprint_is_pinned() {
    // FNV-1a 64 of "hiprs-kernel-abi-1;scale(In<f32>,Out<f32>,f32)" (computed independently, in Python):
    // a change to the scheme changes every kernel's exported name, so the committed code objects must be
    // rebuilt with it.
    assert_eq!(v1::scale::NAME, "scale_hk78d1aebd4614cc30");
}

/// Kernel parameters named like the launcher's own (`stream`, `config`) still compile.
mod clash {
    use super::kernel;
    use hip_rs_kernel_types::device::{In, Out};
    #[kernel]
    pub fn clash(stream: In<f32>, mut config: Out<f32>) {
        if let Some(c) = config.mine() {
            *c = stream.get(0).unwrap_or(0.0);
        }
    }
}

#[test]
fn parameter_names_do_not_clash_with_the_launchers() {
    assert!(clash::clash::NAME.starts_with("clash_hk"));
}

/// The new roles carry their counts in the fingerprint: a launcher built for chunks of 4 or for 2 shared
/// slots per thread never launches code built for another count.
mod counts {
    pub mod chunk4 {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::OutChunk;
        #[kernel]
        pub fn fill(mut y: OutChunk<u32, 4>) {
            y.for_each_mine(|_, c| c.fill(1));
        }
    }
    pub mod chunk8 {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::OutChunk;
        #[kernel]
        pub fn fill(mut y: OutChunk<u32, 8>) {
            y.for_each_mine(|_, c| c.fill(1));
        }
    }
    pub mod shared_default {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::{OutBlock, Shared};
        #[kernel]
        pub fn first(mut y: OutBlock<u32>, tile: Shared<u32>) {
            let all = tile.sync();
            if let Some(y_b) = y.mine() {
                *y_b = all.get(0).unwrap_or(0);
            }
        }
    }
    pub mod shared_one {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::{OutBlock, Shared};
        #[kernel]
        pub fn first(mut y: OutBlock<u32, 1>, tile: Shared<u32, 1>) {
            let all = tile.sync();
            if let Some(y_b) = y.mine() {
                *y_b = all.get(0).unwrap_or(0);
            }
        }
    }
    pub mod shared_two {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::{OutBlock, Shared};
        #[kernel]
        pub fn first(mut y: OutBlock<u32>, tile: Shared<u32, 2>) {
            let all = tile.sync();
            if let Some(y_b) = y.mine() {
                *y_b = all.get(0).unwrap_or(0);
            }
        }
    }
    pub mod affine_short {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::{In, Out};
        use hip_rs_kernel_types::Affine;
        #[kernel]
        pub fn apply(p: In<Affine>, mut y: Out<f32>) {
            if let (Some(p), Some(y_i)) = (p.get(0), y.mine()) {
                *y_i = p.apply(*y_i);
            }
        }
    }
    pub mod affine_path {
        use hip_kernel_macros::kernel;
        use hip_rs_kernel_types::device::{In, Out};
        #[kernel]
        pub fn apply(p: In<hip_rs_kernel_types::Affine>, mut y: Out<f32>) {
            if let (Some(p), Some(y_i)) = (p.get(0), y.mine()) {
                *y_i = p.apply(*y_i);
            }
        }
    }
}

#[test]
fn chunk_lengths_and_shared_slots_are_in_the_fingerprint_and_paths_are_not() {
    assert_ne!(counts::chunk4::fill::NAME, counts::chunk8::fill::NAME);
    assert_eq!(
        counts::shared_default::first::NAME,
        counts::shared_one::first::NAME
    );
    assert_ne!(
        counts::shared_one::first::NAME,
        counts::shared_two::first::NAME
    );
    assert_eq!(
        counts::affine_short::apply::NAME,
        counts::affine_path::apply::NAME
    );
    // What the launcher checks the configuration against.
    assert_eq!(counts::shared_one::first::SHARED_BYTES_PER_THREAD, 4);
    assert_eq!(counts::shared_two::first::SHARED_BYTES_PER_THREAD, 8);
    assert_eq!(counts::chunk4::fill::SHARED_BYTES_PER_THREAD, 0);
}
