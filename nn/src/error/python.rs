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
