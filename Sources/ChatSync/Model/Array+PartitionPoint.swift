extension Array {
    /// The first index whose element fails `belongsBefore`, for an array in which
    /// every element that satisfies it comes first: a binary search.
    package func partitionPoint(_ belongsBefore: (Element) -> Bool) -> Int {
        var low = 0
        var high = count
        while low < high {
            let mid = (low + high) / 2
            if belongsBefore(self[mid]) { low = mid + 1 } else { high = mid }
        }
        return low
    }
}
