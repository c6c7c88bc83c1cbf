//! `trunc`/`fract` for `f64` without std: they are std methods (they
//! call libm on some targets), not `core` ones. One implementation for every
//! build, so the native tests check what the wasm runs.

/// 2^52: from here on every `f64` is an integer.
const INT: f64 = 4_503_599_627_370_496.0;

/// `x` rounded toward zero; NaN and infinities unchanged.
pub(crate) fn trunc(x: f64) -> f64 {
    if x.abs() < INT {
        // In range, so the cast is exact; it loses only the fraction (and the
        // sign of a zero, which no caller looks at).
        x as i64 as f64
    } else {
        x
    }
}

/// `x - trunc(x)`: 0 exactly for integers, NaN for NaN and infinities.
pub(crate) fn fract(x: f64) -> f64 {
    x - trunc(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agree_with_std() {
        let xs = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.0,
            -1.0,
            1.5,
            -1.5,
            2.999_999,
            -2.999_999,
            1e15 + 0.5,
            -1e15 - 0.5,
            4_503_599_627_370_495.5,
            -4_503_599_627_370_495.5,
            9_007_199_254_740_993.0,
            1e300,
            -1e300,
            f64::MIN_POSITIVE,
            -f64::MIN_POSITIVE,
            f64::MAX,
            f64::MIN,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for x in xs {
            // `==` so a zero's sign does not count (see `trunc`).
            assert!(trunc(x) == x.trunc(), "trunc {x}");
            let (f, g) = (fract(x), x.fract());
            assert!(f == g || (f.is_nan() && g.is_nan()), "fract {x}");
        }
        assert!(trunc(f64::NAN).is_nan());
        assert!(fract(f64::INFINITY).is_nan());
    }
}
