// Element and type queries and creation (rs_object_info.rsh, rs_allocation_create.rsh): an invokable answers
// them about a bound allocation and about elements and types it creates, into globals the test reads.
#pragma version(1)
#pragma rs java_package_name(com.kiln.corpus.objects)

rs_allocation gBound;   /* float, 7 x 3, bound by the test */
uint32_t gAnswers[16];

void ask() {
  rs_element e = rsAllocationGetElement(gBound);
  gAnswers[0] = rsElementGetDataType(e);
  gAnswers[1] = rsElementGetVectorSize(e);
  gAnswers[2] = rsElementGetBytesSize(e);
  gAnswers[3] = rsElementGetDataKind(e);
  gAnswers[4] = rsElementGetSubElementCount(e);
  gAnswers[5] = rsIsObject(rsElementGetSubElement(e, 0)) ? 1u : 0u;
  gAnswers[6] = rsElementGetSubElementArraySize(e, 0) + rsElementGetSubElementOffsetBytes(e, 0) +
                rsElementGetSubElementNameLength(e, 0);
  char name[4] = {'x', 'x', 'x', 0};
  gAnswers[7] = rsElementGetSubElementName(e, 0, name, 4) + (uint32_t)name[0];
  rs_element short3 = rsCreateVectorElement(RS_TYPE_SIGNED_16, 3);
  gAnswers[8] = rsElementGetBytesSize(short3);  /* 3 lanes occupy 4 */
  rs_type plain = rsCreateType(short3, 5, 6, 0, false, false, RS_YUV_NONE);
  gAnswers[9] = rsTypeGetDimX(plain) * 100u + rsTypeGetDimY(plain);
  gAnswers[10] = rsIsObject(rsCreateType(short3, 5, 6, 0, true, false, RS_YUV_NONE)) ? 1u : 0u;   /* mipmaps */
  gAnswers[11] = rsIsObject(rsCreateType(short3, 5, 6, 0, false, true, RS_YUV_NONE)) ? 1u : 0u;   /* faces */
  gAnswers[12] = rsIsObject(rsCreateType(short3, 5, 6, 0, false, false, RS_YUV_NV21)) ? 1u : 0u;  /* YUV */
  gAnswers[13] = rsAllocationGetDimX(gBound) * 1000u + rsAllocationGetDimY(gBound);
  gAnswers[14] = rsAllocationGetDimLOD(gBound) + rsAllocationGetDimFaces(gBound);
  gAnswers[15] = rsIsObject(gBound) ? 1u : 0u;
}

/* A kernel asking about the bound allocation, on any device. */
uint RS_KERNEL plus_extent(uint in) { return in + rsAllocationGetDimX(gBound) * 1000u + rsAllocationGetDimY(gBound); }
