package experience

func OfflineMergeClassifier() *MergeClassifier { return nil }
