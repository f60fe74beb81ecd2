use safe_divide::divide;

#[test]
fn exact_division() {
    assert_eq!(divide(12, 4), Some(3));
}

#[test]
#[ignore]
fn rounds_toward_zero() {
    assert_eq!(divide(-7, 2), Some(-3));
}

#[test]
#[ignore]
fn by_zero_is_none() {
    assert_eq!(divide(1, 0), None);
}

#[test]
#[ignore]
#[should_panic]
fn a_panicking_test_that_expects_it() {
    divide(1, 1).map(|_| panic!("expected")).unwrap();
}
