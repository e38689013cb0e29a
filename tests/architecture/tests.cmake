# Layering checks: the control core links neither gRPC, protobuf, MuJoCo nor a logger, and
# the ground station never links the remote site's service. Two independent views:
#   - the declared link closure of each target, walked here at configure time;
#   - the archives' undefined symbols and the sources' includes, checked by the script.

# Every library a target links, directly or through other targets (names as written).
function(tether_link_closure target out)
  set(seen)
  set(queue ${target})
  while(queue)
    list(POP_FRONT queue current)
    if(current IN_LIST seen)
      continue()
    endif()
    list(APPEND seen ${current})
    if(TARGET ${current})
      get_target_property(aliased ${current} ALIASED_TARGET)
      if(aliased)
        list(APPEND queue ${aliased})
        continue()
      endif()
      get_target_property(type ${current} TYPE)
      set(links)
      if(NOT type STREQUAL "INTERFACE_LIBRARY")
        get_target_property(direct ${current} LINK_LIBRARIES)
        if(direct)
          list(APPEND links ${direct})
        endif()
      endif()
      get_target_property(interface ${current} INTERFACE_LINK_LIBRARIES)
      if(interface)
        list(APPEND links ${interface})
      endif()
      foreach(link ${links})
        string(REGEX REPLACE "^\\$<LINK_ONLY:(.*)>$" "\\1" link "${link}")
        if(NOT link MATCHES "^\\$<")
          list(APPEND queue ${link})
        endif()
      endforeach()
    endif()
  endwhile()
  list(REMOVE_ITEM seen ${target})
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

set(architecture_dir ${CMAKE_CURRENT_BINARY_DIR}/architecture)
foreach(layer common cli control sim arm_link camera_link remote tools local proto)
  tether_link_closure(tether_${layer} closure)
  list(JOIN closure "\n" closure_text)
  file(WRITE ${architecture_dir}/tether_${layer}.links "${closure_text}\n")
endforeach()

add_test(NAME Architecture.LayersLinkOnlyWhatTheirLayerAllows
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/architecture/check_layers.sh
                 ${architecture_dir} $<TARGET_FILE:tether_control> $<TARGET_FILE:tether_common>
                 ${PROJECT_SOURCE_DIR})
