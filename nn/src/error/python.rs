//! Python's `repr` of the numbers a message or a printout shows, so PyTorch's sentences read the same in ours.

/// Python's `repr(float)`: the shortest digits that read back to `x`, fixed notation for exponents in
/// `-4..16`, else `1e-05` / `1.5e+16`.
///
/// ```
/// use nn::module::py_float;
/// assert_eq!(py_float(0.1), "0.1");
/// assert_eq!(py_float(20.0), "20.0");
/// assert_eq!(py_float(1e-5), "1e-05");
/// assert_eq!(py_float(1e16), "1e+16");
/// assert_eq!(py_float(-0.0), "-0.0");
/// ```
pub fn py_float(x: f64) -> String {
    if x.is_nan() {
        return "nan".into();
    }
    if x.is_infinite() {
        return if x > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sci = format!("{:e}", x.abs());
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp always writes an exponent");
    let exp: i32 = exp.parse().expect("LowerExp writes an integer exponent");
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let sign = if x.is_sign_negative() { "-" } else { "" };
    if (-4..16).contains(&exp) {
        let body = if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                format!("{}{}.0", digits, "0".repeat(int_len - digits.len()))
            } else {
                format!("{}.{}", &digits[..int_len], &digits[int_len..])
            }
        } else {
            format!("0.{}{}", "0".repeat((-exp - 1) as usize), digits)
        };
        format!("{sign}{body}")
    } else {
        let mant = if digits.len() == 1 {
            digits
        } else {
            format!("{}.{}", &digits[..1], &digits[1..])
        };
        let esign = if exp < 0 { '-' } else { '+' };
        format!("{sign}{mant}e{esign}{:02}", exp.abs())
    }
}

/// A `double` as C++'s `operator<<` prints it, as PyTorch's C++ checks print their numbers: six significant
/// digits (`%g`), trailing zeros dropped (`0`, `-1`, `1.5`, `1e-07`).
pub(crate) fn cpp_double(x: f64) -> String {
    if !x.is_finite() {
        return py_float(x);
    }
    if x == 0.0 {
        return if x.is_sign_negative() { "-0".into() } else { "0".into() };
    }
    let sci = format!("{x:.5e}");
    let (mantissa, exp) = sci.split_once('e').expect("LowerExp always writes an exponent");
    let exp: i32 = exp.parse().expect("LowerExp writes an integer exponent");
    let trim = |s: String| {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s
        }
    };
    if !(-4..6).contains(&exp) {
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{}e{esign}{:02}", trim(mantissa.to_string()), exp.abs());
    }
    trim(format!("{x:.*}", (5 - exp) as usize))
}

#[cfg(test)]
mod tests {
    use super::cpp_double;

    /// The digits C++'s `std::cout << x` prints (glibc's `%g`).
    #[test]
    fn cpp_double_prints_as_cpp_streams_do() {
        let cases = [
            (0.0, "0"),
            (-1.0, "-1"),
            (1.5, "1.5"),
            (0.1, "0.1"),
            (1.0 / 3.0, "0.333333"),
            (123456.0, "123456"),
            (1234567.0, "1.23457e+06"),
            (1e-7, "1e-07"),
            (0.0001, "0.0001"),
            (0.00012345678, "0.000123457"),
            (999999.5, "1e+06"),
            (f64::INFINITY, "inf"),
        ];
        for (x, want) in cases {
            assert_eq!(cpp_double(x), want, "{x}");
        }
    }
}
