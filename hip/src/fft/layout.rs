//! The shape of a plan and how many elements each side of a transform spans: worked out before hipFFT
//! is called, so no execution reads or writes outside its buffers. Pure, tested without a device.

use crate::error::{Error, Result};

/// What a plan transforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transform {
    /// Complex to complex, forward or inverse (`HIPFFT_C2C` / `Z2Z`).
    C2C,
    /// Real to complex, forward: the last dimension's `n` reals give `n / 2 + 1` complex values
    /// (`HIPFFT_R2C` / `D2Z`).
    R2C,
    /// Complex to real, inverse: `n / 2 + 1` complex values give `n` reals (`HIPFFT_C2R` / `Z2D`).
    C2R,
}

/// An advanced data layout of one side (cuFFT's and hipFFT's `embed`, `stride`, `dist`): element
/// `(b, i_0, ..., i_{r-1})` is at `b * dist + stride * (i_{r-1} + embed[r-1] * (i_{r-2} + embed[r-2] * ...))`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The storage sizes of each dimension (`embed[0]` is not used); each at least the dimension.
    pub embed: Vec<usize>,
    /// Elements between consecutive elements of the last dimension.
    pub stride: usize,
    /// Elements between the first elements of consecutive transforms of the batch.
    pub dist: usize,
}

/// The dimensions of a plan (1 to 3, the fastest-varying last, as in C), its batch count, and optional
/// advanced layouts of its input and output (default: contiguous, one transform after the other).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Shape {
    pub(crate) dims: Vec<usize>,
    pub(crate) batch: usize,
    pub(crate) input: Option<Layout>,
    pub(crate) output: Option<Layout>,
}

impl Shape {
    /// One transform of `dims` (`[n]`, `[nx, ny]` or `[nx, ny, nz]`), contiguous.
    pub fn new(dims: &[usize]) -> Shape {
        Shape {
            dims: dims.to_vec(),
            batch: 1,
            input: None,
            output: None,
        }
    }

    /// `batch` transforms.
    pub fn batch(self, batch: usize) -> Shape {
        Shape { batch, ..self }
    }

    /// The input's advanced layout.
    pub fn input_layout(self, layout: Layout) -> Shape {
        Shape {
            input: Some(layout),
            ..self
        }
    }

    /// The output's advanced layout.
    pub fn output_layout(self, layout: Layout) -> Shape {
        Shape {
            output: Some(layout),
            ..self
        }
    }
}

/// A shape checked for a transform: the layouts hipFFT gets (`None`: basic) and the elements each side
/// spans (input, output).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Checked {
    pub dims: Vec<i32>,
    pub batch: i32,
    /// `(embed, stride, dist)` of input and output, both given when either is (hipFFT ignores the
    /// advanced layout where one side is null).
    pub layouts: Option<[(Vec<i32>, i32, i32); 2]>,
    pub spans: [usize; 2],
}

fn invalid(what: &'static str, value: String, reason: impl Into<String>) -> Error {
    Error::InvalidArgument {
        what,
        value,
        reason: reason.into(),
    }
}

fn int(what: &'static str, v: usize) -> Result<i32> {
    i32::try_from(v).map_err(|_| {
        invalid(
            what,
            v.to_string(),
            format!("hipFFT takes it as a C int: at most {}", i32::MAX),
        )
    })
}

/// The logical sizes of each side of `t` over `dims`: the complex side of a real transform has
/// `n / 2 + 1` in the last dimension.
fn sides(t: Transform, dims: &[usize]) -> [Vec<usize>; 2] {
    let mut half = dims.to_vec();
    if let Some(last) = half.last_mut() {
        *last = *last / 2 + 1;
    }
    match t {
        Transform::C2C => [dims.to_vec(), dims.to_vec()],
        Transform::R2C => [dims.to_vec(), half],
        Transform::C2R => [half, dims.to_vec()],
    }
}

/// The elements one side spans: `(batch - 1) * dist + stride * max_index + 1`.
fn span(what: &'static str, sizes: &[usize], layout: &Layout, batch: usize) -> Result<usize> {
    if layout.embed.len() != sizes.len() {
        return Err(invalid(
            what,
            format!("{} embed sizes", layout.embed.len()),
            format!("the plan has {} dimensions", sizes.len()),
        ));
    }
    for (k, (e, n)) in layout.embed.iter().zip(sizes).enumerate().skip(1) {
        if e < n {
            return Err(invalid(
                what,
                format!("embed[{k}] = {e}"),
                format!("dimension {k} holds {n} elements on this side"),
            ));
        }
    }
    if layout.stride == 0 {
        return Err(invalid(
            what,
            "stride 0".into(),
            "the stride must be at least 1",
        ));
    }
    let overflow = || {
        invalid(
            what,
            "its layout".into(),
            "the elements it spans overflow usize",
        )
    };
    // The largest linear index of one transform.
    let mut max = 0usize;
    let mut scale = 1usize;
    for k in (0..sizes.len()).rev() {
        max = sizes[k]
            .saturating_sub(1)
            .checked_mul(scale)
            .and_then(|v| v.checked_add(max))
            .ok_or_else(overflow)?;
        scale = scale
            .checked_mul(layout.embed[k].max(1))
            .ok_or_else(overflow)?;
    }
    let one = max
        .checked_mul(layout.stride)
        .and_then(|v| v.checked_add(1))
        .ok_or_else(overflow)?;
    match batch {
        0 => Ok(0),
        b => layout
            .dist
            .checked_mul(b - 1)
            .and_then(|v| v.checked_add(one))
            .ok_or_else(overflow),
    }
}

/// The contiguous layout of `sizes`: one transform after the other, so `dist` is their product, which
/// is refused where it overflows.
fn basic(what: &'static str, sizes: &[usize]) -> Result<Layout> {
    let dist = sizes
        .iter()
        .try_fold(1usize, |p, n| p.checked_mul(*n))
        .ok_or_else(|| {
            invalid(
                what,
                format!("dimensions {sizes:?}"),
                "the elements of one transform overflow usize",
            )
        })?;
    Ok(Layout {
        embed: sizes.to_vec(),
        stride: 1,
        dist,
    })
}

/// With more than one transform, transforms of the batch must not share elements of a side they write:
/// `dist` at least the `one` elements a transform spans there. `input`: the side is the input (which a
/// complex-to-real transform overwrites).
fn apart(what: &'static str, layout: &Layout, one: usize, batch: usize, input: bool) -> Result<()> {
    if batch < 2 || layout.dist >= one {
        return Ok(());
    }
    let reason = if input {
        format!(
            "a complex-to-real transform overwrites its input, and each input spans {one} elements: a \
             smaller distance makes transforms of the batch overwrite each other's input"
        )
    } else {
        format!(
            "each output spans {one} elements: a smaller distance makes transforms of the batch write \
             the same elements"
        )
    };
    Err(invalid(what, format!("dist {}", layout.dist), reason))
}

/// Check `shape` for `t`.
pub(crate) fn check(t: Transform, shape: &Shape) -> Result<Checked> {
    let rank = shape.dims.len();
    if !(1..=3).contains(&rank) {
        return Err(invalid(
            "FFT dimensions",
            format!("{rank} dimensions"),
            "hipFFT plans have 1, 2 or 3 dimensions",
        ));
    }
    if let Some(k) = shape.dims.iter().position(|n| *n == 0) {
        return Err(invalid(
            "FFT dimensions",
            format!("dimension {k} of size 0"),
            "every dimension needs at least one element",
        ));
    }
    if shape.batch == 0 {
        return Err(invalid(
            "FFT batch",
            "0".into(),
            "a plan transforms at least one batch",
        ));
    }
    // hipFFT's C ints first: no size is computed from a value it could not take anyway.
    let dims = shape
        .dims
        .iter()
        .map(|n| int("FFT dimension", *n))
        .collect::<Result<Vec<_>>>()?;
    let batch = int("FFT batch", shape.batch)?;
    let [in_sizes, out_sizes] = sides(t, &shape.dims);
    let in_layout = match &shape.input {
        Some(l) => l.clone(),
        None => basic("FFT input layout", &in_sizes)?,
    };
    let out_layout = match &shape.output {
        Some(l) => l.clone(),
        None => basic("FFT output layout", &out_sizes)?,
    };
    let spans = [
        span("FFT input layout", &in_sizes, &in_layout, shape.batch)?,
        span("FFT output layout", &out_sizes, &out_layout, shape.batch)?,
    ];
    // Outputs of two transforms of the batch must not share elements (they would be written at once);
    // nor inputs of a complex-to-real transform, which overwrites its input (cuFFT and rocFFT both do).
    let one_out = span("FFT output layout", &out_sizes, &out_layout, 1)?;
    apart(
        "FFT output layout",
        &out_layout,
        one_out,
        shape.batch,
        false,
    )?;
    if t == Transform::C2R {
        let one_in = span("FFT input layout", &in_sizes, &in_layout, 1)?;
        apart("FFT input layout", &in_layout, one_in, shape.batch, true)?;
    }
    int("FFT input span", spans[0])?;
    int("FFT output span", spans[1])?;
    let raw = |l: &Layout| -> Result<(Vec<i32>, i32, i32)> {
        Ok((
            l.embed
                .iter()
                .map(|e| int("FFT embed", *e))
                .collect::<Result<Vec<_>>>()?,
            int("FFT stride", l.stride)?,
            int("FFT dist", l.dist)?,
        ))
    };
    let layouts = if shape.input.is_some() || shape.output.is_some() {
        Some([raw(&in_layout)?, raw(&out_layout)?])
    } else {
        None
    };
    Ok(Checked {
        dims,
        batch,
        layouts,
        spans,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn what(r: Result<Checked>) -> &'static str {
        match r {
            Err(Error::InvalidArgument { what, .. }) => what,
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn basic_layouts_span_the_batch_and_real_sides_halve_the_last_dimension() {
        assert_eq!(
            check(Transform::C2C, &Shape::new(&[8])).unwrap().spans,
            [8, 8]
        );
        assert_eq!(
            check(Transform::C2C, &Shape::new(&[4, 6]).batch(3))
                .unwrap()
                .spans,
            [72, 72]
        );
        // R2C over 4 x 6: 24 reals in, 4 x 4 complex out per transform.
        assert_eq!(
            check(Transform::R2C, &Shape::new(&[4, 6]).batch(2))
                .unwrap()
                .spans,
            [48, 32]
        );
        assert_eq!(
            check(Transform::C2R, &Shape::new(&[5]).batch(2))
                .unwrap()
                .spans,
            [6, 10]
        );
        assert_eq!(
            check(Transform::R2C, &Shape::new(&[2, 3, 7]))
                .unwrap()
                .spans,
            [42, 24]
        );
        assert!(check(Transform::C2C, &Shape::new(&[8]))
            .unwrap()
            .layouts
            .is_none());
    }

    #[test]
    fn advanced_layouts_use_embed_stride_and_dist() {
        // 3 transforms of 4 elements, every second element, 10 apart: the last one ends at 20 + 2 * 3.
        let l = Layout {
            embed: vec![4],
            stride: 2,
            dist: 10,
        };
        let c = check(
            Transform::C2C,
            &Shape::new(&[4]).batch(3).input_layout(l.clone()),
        )
        .unwrap();
        assert_eq!(c.spans, [27, 12]);
        let [(ie, is, id), (oe, os, od)] = c.layouts.unwrap();
        assert_eq!((ie, is, id, oe, os, od), (vec![4], 2, 10, vec![4], 1, 4));
        // 2-D rows padded to 8: element (i, j) at i * 8 + j; 3 x 5 spans 2 * 8 + 4 + 1.
        let padded = Layout {
            embed: vec![3, 8],
            stride: 1,
            dist: 24,
        };
        assert_eq!(
            check(Transform::C2C, &Shape::new(&[3, 5]).input_layout(padded))
                .unwrap()
                .spans[0],
            21
        );
    }

    #[test]
    fn dimensions_whose_product_overflows_are_refused_not_multiplied() {
        // 2^32 * 2^32 elements: the basic layout's distance overflowed (a panic in debug builds).
        for t in [Transform::C2C, Transform::R2C, Transform::C2R] {
            assert_eq!(
                what(check(t, &Shape::new(&[1 << 32, 1 << 32]))),
                "FFT dimension",
                "{t:?}"
            );
            // Each within a C int, the product not within usize.
            let big = i32::MAX as usize;
            assert!(check(t, &Shape::new(&[big, big, big])).is_err(), "{t:?}");
        }
    }

    #[test]
    fn c2r_inputs_of_the_batch_may_not_overlap_as_the_transform_writes_them() {
        // C2R over 8 points: 5 complex values in per transform. A distance of 0 (every transform reads one
        // spectrum) or below 5 lets the transforms of the batch overwrite each other's input.
        for dist in [0, 1, 4] {
            let shared = Layout {
                embed: vec![5],
                stride: 1,
                dist,
            };
            let r = check(
                Transform::C2R,
                &Shape::new(&[8]).batch(3).input_layout(shared.clone()),
            );
            match r {
                Err(Error::InvalidArgument {
                    what,
                    value,
                    reason,
                }) => {
                    assert_eq!((what, value), ("FFT input layout", format!("dist {dist}")));
                    assert!(reason.contains("overwrites its input"), "{reason}");
                }
                other => panic!("dist {dist}: {other:?}"),
            }
            // Transforms that only read their input may share it.
            for t in [Transform::C2C, Transform::R2C] {
                let layout = Layout {
                    embed: vec![8],
                    ..shared.clone()
                };
                assert!(
                    check(t, &Shape::new(&[8]).batch(3).input_layout(layout)).is_ok(),
                    "{t:?} dist {dist}"
                );
            }
            // One transform has nothing to overwrite.
            assert!(check(Transform::C2R, &Shape::new(&[8]).input_layout(shared)).is_ok());
        }
        // Exactly one input apart is enough.
        let apart = Layout {
            embed: vec![5],
            stride: 1,
            dist: 5,
        };
        assert_eq!(
            check(
                Transform::C2R,
                &Shape::new(&[8]).batch(3).input_layout(apart)
            )
            .unwrap()
            .spans,
            [15, 24]
        );
    }

    #[test]
    fn bad_shapes_and_layouts_are_refused() {
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[]))),
            "FFT dimensions"
        );
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[2, 2, 2, 2]))),
            "FFT dimensions"
        );
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[4, 0]))),
            "FFT dimensions"
        );
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[4]).batch(0))),
            "FFT batch"
        );
        let short = Layout {
            embed: vec![3, 4],
            stride: 1,
            dist: 12,
        };
        assert_eq!(
            what(check(
                Transform::C2C,
                &Shape::new(&[3, 5]).input_layout(short)
            )),
            "FFT input layout"
        );
        let rank = Layout {
            embed: vec![5],
            stride: 1,
            dist: 5,
        };
        assert_eq!(
            what(check(
                Transform::C2C,
                &Shape::new(&[3, 5]).output_layout(rank)
            )),
            "FFT output layout"
        );
        let zero = Layout {
            embed: vec![4],
            stride: 0,
            dist: 4,
        };
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[4]).input_layout(zero))),
            "FFT input layout"
        );
        // Outputs overlapping across the batch; inputs may share.
        let overlap = Layout {
            embed: vec![4],
            stride: 1,
            dist: 3,
        };
        assert_eq!(
            what(check(
                Transform::C2C,
                &Shape::new(&[4]).batch(2).output_layout(overlap.clone())
            )),
            "FFT output layout"
        );
        assert!(check(
            Transform::C2C,
            &Shape::new(&[4]).batch(2).input_layout(Layout {
                dist: 0,
                ..overlap.clone()
            })
        )
        .is_ok());
        // One transform has nothing to overlap with: any distance will do.
        assert!(check(
            Transform::C2C,
            &Shape::new(&[4]).output_layout(Layout { dist: 0, ..overlap })
        )
        .is_ok());
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[1 << 31]))),
            "FFT dimension"
        );
        let huge = Layout {
            embed: vec![4],
            stride: usize::MAX / 2,
            dist: 4,
        };
        assert_eq!(
            what(check(Transform::C2C, &Shape::new(&[4]).input_layout(huge))),
            "FFT input layout"
        );
    }
}

#[cfg(test)]
#[path = "layout_fuzz.rs"]
mod fuzz;
