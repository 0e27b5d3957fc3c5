extension Result {
    /// The value of a success, nil for a failure: for `try #require(result.successValue)` in tests.
    public var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The error of a failure, nil for a success: for `try #require(result.failureValue)` in tests.
    public var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
