package hsm

import (
	"encoding/json"
	"time"
)

// DeadLetter is an SCN delivery that a subscriber refused for good (a 4xx
// answer other than 408 and 429): HSM moved it aside instead of retrying it
// ahead of every later SCN. GET /Subscriptions/SCN/deadletters lists them.
type DeadLetter struct {
	// ID numbers dead letters in the order they were set aside.
	ID int64 `json:"ID"`
	// SubscriptionID and Subscriber name the subscription that refused it.
	SubscriptionID int64  `json:"SubscriptionID"`
	Subscriber     string `json:"Subscriber"`
	// Seq and Epoch are the refused SCN's.
	Seq   int64 `json:"Seq"`
	Epoch int64 `json:"Epoch,omitempty"`
	// Error is the subscriber's answer.
	Error string `json:"Error"`
	// Time is when HSM gave up on it.
	Time time.Time `json:"Time"`
	// SCN is the body that was refused.
	SCN json.RawMessage `json:"SCN"`
}

// DeadLetterList is the body of GET /Subscriptions/SCN/deadletters.
type DeadLetterList struct {
	DeadLetters []DeadLetter `json:"DeadLetters"`
}
