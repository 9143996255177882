/* SPDX-License-Identifier: MIT */
/* export.h - what libvolatile.so exports; everything else is hidden. */
#ifndef VL_EXPORT_H
#define VL_EXPORT_H

#define VL_EXPORT __attribute__((visibility("default")))

#endif
