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

// HWInvByLoc is a hardware inventory location (HSM's HWInventoryByLocation).
// The *LocationInfo field set is the one HWInventoryByLocationType names.
// PopulatedFRU is set when Status is Populated.
type HWInvByLoc struct {
	ID                        string `json:"ID"`
	Type                      string `json:"Type"`
	Ordinal                   int    `json:"Ordinal"`
	Status                    string `json:"Status"`
	HWInventoryByLocationType string `json:"HWInventoryByLocationType"`

	NodeLocationInfo          *SystemLocationInfo    `json:"NodeLocationInfo,omitempty"`
	ProcessorLocationInfo     *ProcessorLocationInfo `json:"ProcessorLocationInfo,omitempty"`
	NodeAccelLocationInfo     *ProcessorLocationInfo `json:"NodeAccelLocationInfo,omitempty"`
	MemoryLocationInfo        *MemoryLocationInfo    `json:"MemoryLocationInfo,omitempty"`
	NodeBMCLocationInfo       *ManagerLocationInfo   `json:"NodeBMCLocationInfo,omitempty"`
	NodeEnclosureLocationInfo *ChassisLocationInfo   `json:"NodeEnclosureLocationInfo,omitempty"`

	PopulatedFRU *HWInvByFRU `json:"PopulatedFRU,omitempty"`
}

// HWInvByFRU is a physical part (HSM's HWInventoryByFRU). The *FRUInfo field
// set is the one HWInventoryByFRUType names.
type HWInvByFRU struct {
	FRUID string `json:"FRUID"`
	Type  string `json:"Type"`
	// Subtype is always sent, empty or not, as the shipped HSM does (the
	// swagger calls it FRUSubtype).
	Subtype              string `json:"Subtype"`
	HWInventoryByFRUType string `json:"HWInventoryByFRUType"`

	NodeFRUInfo          *SystemFRUInfo    `json:"NodeFRUInfo,omitempty"`
	ProcessorFRUInfo     *ProcessorFRUInfo `json:"ProcessorFRUInfo,omitempty"`
	NodeAccelFRUInfo     *ProcessorFRUInfo `json:"NodeAccelFRUInfo,omitempty"`
	MemoryFRUInfo        *MemoryFRUInfo    `json:"MemoryFRUInfo,omitempty"`
	NodeBMCFRUInfo       *ManagerFRUInfo   `json:"NodeBMCFRUInfo,omitempty"`
	NodeEnclosureFRUInfo *ChassisFRUInfo   `json:"NodeEnclosureFRUInfo,omitempty"`
}

// SystemLocationInfo is HSM's RedfishSystemLocationInfo.
type SystemLocationInfo struct {
	ID               string            `json:"Id"`
	Name             string            `json:"Name,omitempty"`
	Description      string            `json:"Description,omitempty"`
	Hostname         string            `json:"Hostname,omitempty"`
	ProcessorSummary *ProcessorSummary `json:"ProcessorSummary,omitempty"`
	MemorySummary    *MemorySummary    `json:"MemorySummary,omitempty"`
}

// ProcessorSummary is a system's processor count and model.
type ProcessorSummary struct {
	Count *uint  `json:"Count,omitempty"`
	Model string `json:"Model,omitempty"`
}

// MemorySummary is a system's total memory.
type MemorySummary struct {
	TotalSystemMemoryGiB *float64 `json:"TotalSystemMemoryGiB,omitempty"`
}

// SystemFRUInfo is HSM's RedfishSystemFRUInfo.
type SystemFRUInfo struct {
	AssetTag     string `json:"AssetTag,omitempty"`
	BiosVersion  string `json:"BiosVersion,omitempty"`
	Model        string `json:"Model,omitempty"`
	Manufacturer string `json:"Manufacturer,omitempty"`
	PartNumber   string `json:"PartNumber,omitempty"`
	SerialNumber string `json:"SerialNumber,omitempty"`
	SKU          string `json:"SKU,omitempty"`
	SystemType   string `json:"SystemType,omitempty"`
	UUID         string `json:"UUID,omitempty"`
}

// ProcessorLocationInfo is HSM's RedfishProcessorLocationInfo.
type ProcessorLocationInfo struct {
	ID          string `json:"Id"`
	Name        string `json:"Name,omitempty"`
	Description string `json:"Description,omitempty"`
	Socket      string `json:"Socket,omitempty"`
}

// ProcessorFRUInfo is HSM's RedfishProcessorFRUInfo.
type ProcessorFRUInfo struct {
	InstructionSet        string       `json:"InstructionSet,omitempty"`
	Manufacturer          string       `json:"Manufacturer,omitempty"`
	MaxSpeedMHz           *int         `json:"MaxSpeedMHz,omitempty"`
	Model                 string       `json:"Model,omitempty"`
	SerialNumber          string       `json:"SerialNumber,omitempty"`
	PartNumber            string       `json:"PartNumber,omitempty"`
	ProcessorArchitecture string       `json:"ProcessorArchitecture,omitempty"`
	ProcessorID           *ProcessorID `json:"ProcessorId,omitempty"`
	ProcessorType         string       `json:"ProcessorType,omitempty"`
	TotalCores            *int         `json:"TotalCores,omitempty"`
	TotalThreads          *int         `json:"TotalThreads,omitempty"`
}

// ProcessorID is the CPUID-style identification of a processor.
type ProcessorID struct {
	EffectiveFamily         string `json:"EffectiveFamily,omitempty"`
	EffectiveModel          string `json:"EffectiveModel,omitempty"`
	IdentificationRegisters string `json:"IdentificationRegisters,omitempty"`
	MicrocodeInfo           string `json:"MicrocodeInfo,omitempty"`
	Step                    string `json:"Step,omitempty"`
	VendorID                string `json:"VendorId,omitempty"`
}

// MemoryLocationInfo is HSM's RedfishMemoryLocationInfo.
type MemoryLocationInfo struct {
	ID             string          `json:"Id"`
	Name           string          `json:"Name,omitempty"`
	Description    string          `json:"Description,omitempty"`
	MemoryLocation *MemoryLocation `json:"MemoryLocation,omitempty"`
}

// MemoryLocation is the manufacturer's numbering of a memory slot.
type MemoryLocation struct {
	Socket           *int `json:"Socket,omitempty"`
	MemoryController *int `json:"MemoryController,omitempty"`
	Channel          *int `json:"Channel,omitempty"`
	Slot             *int `json:"Slot,omitempty"`
}

// MemoryFRUInfo is HSM's RedfishMemoryFRUInfo.
type MemoryFRUInfo struct {
	BaseModuleType    string `json:"BaseModuleType,omitempty"`
	BusWidthBits      *int   `json:"BusWidthBits,omitempty"`
	CapacityMiB       *int   `json:"CapacityMiB,omitempty"`
	DataWidthBits     *int   `json:"DataWidthBits,omitempty"`
	ErrorCorrection   string `json:"ErrorCorrection,omitempty"`
	Manufacturer      string `json:"Manufacturer,omitempty"`
	MemoryType        string `json:"MemoryType,omitempty"`
	MemoryDeviceType  string `json:"MemoryDeviceType,omitempty"`
	OperatingSpeedMhz *int   `json:"OperatingSpeedMhz,omitempty"`
	PartNumber        string `json:"PartNumber,omitempty"`
	RankCount         *int   `json:"RankCount,omitempty"`
	SerialNumber      string `json:"SerialNumber,omitempty"`
}

// ManagerLocationInfo is HSM's RedfishManagerLocationInfo.
type ManagerLocationInfo struct {
	ID                  string `json:"Id"`
	Name                string `json:"Name,omitempty"`
	Description         string `json:"Description,omitempty"`
	DateTime            string `json:"DateTime,omitempty"`
	DateTimeLocalOffset string `json:"DateTimeLocalOffset,omitempty"`
	FirmwareVersion     string `json:"FirmwareVersion,omitempty"`
}

// ManagerFRUInfo is HSM's RedfishManagerFRUInfo.
type ManagerFRUInfo struct {
	ManagerType  string `json:"ManagerType,omitempty"`
	Manufacturer string `json:"Manufacturer,omitempty"`
	SerialNumber string `json:"SerialNumber,omitempty"`
	Model        string `json:"Model,omitempty"`
	PartNumber   string `json:"PartNumber,omitempty"`
}

// ChassisLocationInfo is HSM's RedfishChassisLocationInfo.
type ChassisLocationInfo struct {
	ID          string `json:"Id"`
	Name        string `json:"Name,omitempty"`
	Description string `json:"Description,omitempty"`
	Hostname    string `json:"Hostname,omitempty"`
}

// ChassisFRUInfo is HSM's RedfishChassisFRUInfo.
type ChassisFRUInfo struct {
	AssetTag     string `json:"AssetTag,omitempty"`
	ChassisType  string `json:"ChassisType,omitempty"`
	Model        string `json:"Model,omitempty"`
	Manufacturer string `json:"Manufacturer,omitempty"`
	PartNumber   string `json:"PartNumber,omitempty"`
	SerialNumber string `json:"SerialNumber,omitempty"`
	SKU          string `json:"SKU,omitempty"`
}
