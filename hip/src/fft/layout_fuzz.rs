//! The layout check over hostile values, as a fuzzer would run it (issue 43): dimensions, batch counts,
//! embed sizes, strides and distances at the edges (0, 1, around `i32::MAX`, `2^32`, `usize::MAX`) and
//! anywhere. Every case ends in `Ok` or `Err(InvalidArgument)`, never a panic (this is a debug build:
//! arithmetic overflow panics), and what is `Ok` is a plan hipFFT can take and the buffers can hold.

use super::*;
use crate::test_fuzz::Rng;

/// One case: 0 to 4 dimensions (1 to 3 are plans), a batch, and each side's layout or none. Half the
/// cases take every value small (below 9), where layouts are plausible and the overlap rules decide.
fn shape(rng: &mut Rng) -> Shape {
    let small = rng.below(2) == 0;
    let value = |rng: &mut Rng| if small { rng.below(9) } else { rng.size() };
    let rank = rng.below(5);
    let mut s = Shape::new(&(0..rank).map(|_| value(rng)).collect::<Vec<_>>()).batch(value(rng));
    let layout = |rng: &mut Rng| {
        // Mostly as many embed sizes as dimensions, sometimes another count.
        let n = if rng.below(5) == 0 {
            rng.below(5)
        } else {
            rank
        };
        Layout {
            embed: (0..n).map(|_| value(rng)).collect(),
            stride: value(rng),
            dist: value(rng),
        }
    };
    if rng.below(2) == 0 {
        s = s.input_layout(layout(rng));
    }
    if rng.below(2) == 0 {
        s = s.output_layout(layout(rng));
    }
    s
}

/// What an `Ok` promises: values within hipFFT's C `int`, spans that cover the batch, and transforms of
/// the batch that do not write the same elements.
fn sound(t: Transform, s: &Shape, c: &Checked) {
    let fits = |v: usize| i32::try_from(v).is_ok();
    assert!((1..=3).contains(&c.dims.len()), "{t:?} {s:?}");
    assert!(c.dims.iter().all(|d| *d > 0), "{t:?} {s:?}");
    assert_eq!(c.batch as usize, s.batch, "{t:?} {s:?}");
    assert!(
        c.batch > 0 && c.spans.iter().all(|v| fits(*v)),
        "{t:?} {s:?}"
    );
    let [in_sizes, out_sizes] = sides(t, &s.dims);
    for (k, (sizes, given)) in [(in_sizes, &s.input), (out_sizes, &s.output)]
        .into_iter()
        .enumerate()
    {
        let layout = match given {
            Some(l) => l.clone(),
            None => basic("side", &sizes).unwrap(),
        };
        let one = span("side", &sizes, &layout, 1).unwrap();
        assert!(one >= 1 && c.spans[k] >= one, "{t:?} {s:?}");
        let writes = k == 1 || t == Transform::C2R;
        if writes && s.batch > 1 {
            assert!(layout.dist >= one, "{t:?} {s:?}: side {k} overlaps");
        }
        if let Some([(ie, is, id), (oe, os, od)]) = &c.layouts {
            let (e, st, d) = if k == 0 { (ie, is, id) } else { (oe, os, od) };
            assert_eq!(e.len(), sizes.len(), "{t:?} {s:?}");
            assert!(*st > 0 && *d >= 0, "{t:?} {s:?}");
        }
    }
}

#[test]
fn hostile_shapes_end_in_ok_or_err_never_a_panic() {
    let mut rng = Rng::new(43);
    let (mut ok, mut err) = (0, 0);
    for case in 0..20_000 {
        let s = shape(&mut rng);
        for t in [Transform::C2C, Transform::R2C, Transform::C2R] {
            let r = std::panic::catch_unwind(|| check(t, &s))
                .unwrap_or_else(|_| panic!("case {case}: check({t:?}, {s:?}) panicked"));
            match r {
                Ok(c) => {
                    sound(t, &s, &c);
                    ok += 1;
                }
                Err(Error::InvalidArgument { what, .. }) => {
                    assert!(what.starts_with("FFT "), "{what}");
                    err += 1;
                }
                Err(e) => panic!("case {case}: {t:?} {s:?}: {e:?}"),
            }
        }
    }
    // Both answers are reached: the generator is not all edges.
    assert!(ok > 100 && err > 100, "{ok} Ok, {err} Err");
}

/// The cases the fuzzing found, each against the code before its fix.
#[test]
fn hostile_cases_the_fuzzing_found() {
    // The basic output layout's distance, an unchecked product of 2^31 - 1, 2^31 - 1 and 5: "attempt to
    // multiply with overflow".
    let product = Shape::new(&[i32::MAX as usize, i32::MAX as usize, 5])
        .batch(15)
        .input_layout(Layout {
            embed: vec![2234752724842072711, 6, 5907408421156421208],
            stride: 8,
            dist: i32::MAX as usize,
        });
    for t in [Transform::C2C, Transform::R2C, Transform::C2R] {
        assert!(
            matches!(check(t, &product), Err(Error::InvalidArgument { .. })),
            "{t:?}"
        );
    }
    // A complex-to-real batch of two 7 x 4 transforms whose inputs (7 x 3 complex values, rows 7 apart,
    // every fifth element: 221 elements each) start 5 apart: accepted, and each transform overwrote the
    // other's input.
    let shared = Shape::new(&[7, 4]).batch(2).input_layout(Layout {
        embed: vec![6, 7],
        stride: 5,
        dist: 5,
    });
    match check(Transform::C2R, &shared) {
        Err(Error::InvalidArgument { what, value, .. }) => {
            assert_eq!((what, value.as_str()), ("FFT input layout", "dist 5"))
        }
        other => panic!("{other:?}"),
    }
    assert!(check(Transform::C2C, &shared).is_ok());
}
