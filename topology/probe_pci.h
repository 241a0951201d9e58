/* probe_pci.h - the PCI part of a topology conversion (probe_pci.c):
 * GPUs and NICs found and placed.  Shell. */
#ifndef HPT_PROBE_PCI_H
#define HPT_PROBE_PCI_H

struct probe_conv;

/* Finds the GPUs and NICs of c's topology and adds them to c's
 * node_topo, sorted by PCI bus id; a failure is reported through c. */
void probe_pci_devices(struct probe_conv *c);

#endif
