package hsm

import "time"

// HWHistory is one hardware inventory event.
type HWHistory struct {
	ID        string    `json:"ID"`
	FRUID     string    `json:"FRUID"`
	Timestamp time.Time `json:"Timestamp"`
	EventType string    `json:"EventType"`
}

// HWHistoryArray is the history of one location or FRU.
type HWHistoryArray struct {
	ID      string      `json:"ID"`
	History []HWHistory `json:"History"`
}
